/**
 * The names a scaffold is made of — project, API group, version, kind, plural — checked as the
 * Kubernetes API server and npm would check them, and the names derived from them (file names,
 * identifiers), so a generated project never holds a CRD the server refuses.
 */
import { quote, UsageError } from '../errors.ts';
import { guessPlural } from '../kv-types.ts';

/** A DNS-1123 label: lower-case letters, digits and `-`, starting and ending alphanumeric. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A DNS-1035 label (a CRD's plural): as a DNS-1123 label, starting with a letter. */
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** Kubernetes' version names: v1, v2beta1, v1alpha3. */
const VERSION = /^v[1-9]\d*((alpha|beta)[1-9]\d*)?$/;
/** A kind: PascalCase, ASCII letters and digits. */
const KIND = /^[A-Z][A-Za-z0-9]*$/;

/**
 * The longest project name: the name is also the prefix of the Kubernetes objects `converge
 * manifests` names after it (`<name>-system`, `<name>-leader`, `<name>-metrics`, …), which cuts a
 * package name to 40 characters; at most 40, the two names stay the same.
 */
export const MAX_NAME_LENGTH = 40;

/**
 * Checks a project name: a DNS label of at most {@link MAX_NAME_LENGTH} characters (it names the
 * npm package, the Deployment, the ServiceAccount and the `<name>-system` namespace).
 */
export function checkName(command: string, name: string): string {
  if (name.length > MAX_NAME_LENGTH || !DNS_LABEL.test(name))
    throw new UsageError(
      command,
      `--name must be a DNS label of at most ${MAX_NAME_LENGTH} characters (lower-case letters, digits and -, starting and ending with a letter or digit), got ${quote(name)}`,
    );
  return name;
}

/**
 * A project name from a folder's name: lower case, every run of other characters than letters
 * and digits made one `-`, cut to {@link MAX_NAME_LENGTH}; undefined when nothing is left.
 */
export function nameFromFolder(folder: string): string | undefined {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_NAME_LENGTH)
    .replace(/^-+|-+$/g, '');
  return name === '' ? undefined : name;
}

/** Checks an API group: a DNS subdomain with at least one dot, as a CRD's `spec.group` must be. */
export function checkGroup(command: string, group: string): string {
  const labels = group.split('.');
  if (group.length > 253 || labels.length < 2 || !labels.every((l) => l.length <= 63 && DNS_LABEL.test(l)))
    throw new UsageError(
      command,
      `--group must be a DNS subdomain with at least one dot (lower-case letters, digits, - and ., like webapp.example.com), got ${quote(group)}`,
    );
  return group;
}

/** Checks a version: Kubernetes' `v<N>`, `v<N>alpha<M>` or `v<N>beta<M>`. */
export function checkVersion(command: string, version: string): string {
  if (version.length > 63 || !VERSION.test(version))
    throw new UsageError(
      command,
      `--version must be a Kubernetes API version (v1, v1beta1, v2alpha3), got ${quote(version)}`,
    );
  return version;
}

/** Checks a kind: PascalCase letters and digits, at most 63 characters. */
export function checkKind(command: string, kind: string): string {
  if (kind.length > 63 || !KIND.test(kind))
    throw new UsageError(
      command,
      `--kind must be PascalCase letters and digits starting with an upper-case letter (Guestbook, CronTab), got ${quote(kind)}`,
    );
  return kind;
}

/** Checks a plural: a lower-case DNS-1035 label, as a CRD's `spec.names.plural` must be. */
export function checkPlural(command: string, plural: string): string {
  if (plural.length > 63 || !DNS_1035_LABEL.test(plural))
    throw new UsageError(
      command,
      `--plural must be lower-case letters, digits and - starting with a letter (guestbooks), got ${quote(plural)}`,
    );
  return plural;
}

/** The plural of `kind` when none is given (`Policy` → `policies`), as `converge kv` guesses it. */
export function pluralOf(kind: string): string {
  return guessPlural(kind);
}

/** Everything a kind's files are named after. */
export interface KindNames {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly clusterScoped: boolean;
  /** The file name without extension: `CronTab` → `cron-tab`. */
  readonly file: string;
  /** The identifier of its values: `CronTab` → `cronTab` (`cronTabKind`, `cronTabController`). */
  readonly camel: string;
}

/** The names of a kind's files and identifiers, from names already checked. */
export function kindNames(options: {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural?: string | undefined;
  readonly clusterScoped?: boolean | undefined;
}): KindNames {
  const { kind } = options;
  const file = kind
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
  const camel = file.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  return {
    group: options.group,
    version: options.version,
    kind,
    plural: options.plural ?? pluralOf(kind),
    clusterScoped: options.clusterScoped === true,
    file,
    camel,
  };
}
