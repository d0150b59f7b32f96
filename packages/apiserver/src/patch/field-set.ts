import { compareElements, type FieldPath, type PathElement, serializeElement } from './path-element.ts';

interface Node {
  readonly pe: PathElement;
  member: boolean;
  /** The nodes below; undefined while there are none (most nodes are leaves: no Map for each). */
  children: Map<string, Node> | undefined;
}

type Nodes = ReadonlyMap<string, Node>;

const NO_NODES: Nodes = new Map();

/** The nodes below `node` (an empty map, shared and never written, when there are none). */
function below(node: Node): Nodes {
  return node.children ?? NO_NODES;
}

/**
 * A set of field paths, stored as a tree (the shape of FieldsV1). A path is a *member* when it is
 * in the set itself; a node may be a member and have members below it. The root is never a member.
 * Operations other than {@link insert} return new sets and never change their inputs; they may
 * share subtrees with them, so a set is built with `insert` and only read afterwards.
 */
export class FieldSet {
  readonly #children: Map<string, Node>;

  constructor(children: Map<string, Node> = new Map()) {
    this.#children = children;
  }

  /** Adds `path` (not empty) as a member. */
  insert(path: FieldPath): this {
    let level = this.#children;
    const last = path.length - 1;
    for (let i = 0; i <= last; i++) {
      const pe = path[i] as PathElement;
      const node = nodeAt(level, pe, serializeElement(pe));
      if (i === last) node.member = true;
      else level = node.children ??= new Map();
    }
    return this;
  }

  /**
   * Adds `pe` (relative to this set) as a member; `id` is its FieldsV1 spelling when the caller
   * already has it. For building a set level by level, as {@link insert}.
   */
  insertMember(pe: PathElement, id: string = serializeElement(pe)): this {
    nodeAt(this.#children, pe, id).member = true;
    return this;
  }

  /** The set below `pe`, created if absent and written through, for building level by level. */
  levelBelow(pe: PathElement, id: string = serializeElement(pe)): FieldSet {
    const node = nodeAt(this.#children, pe, id);
    node.children ??= new Map();
    return new FieldSet(node.children);
  }

  /** True if there are no members. */
  get empty(): boolean {
    return !hasMembers(this.#children);
  }

  /** True if `pe` (relative to this set) is a member. */
  hasMember(pe: PathElement): boolean {
    return this.#children.get(serializeElement(pe))?.member === true;
  }

  /** The members below `pe`, as a set relative to it (empty when there are none). */
  at(pe: PathElement): FieldSet {
    const node = this.#children.get(serializeElement(pe));
    return node?.children === undefined ? EMPTY : new FieldSet(node.children);
  }

  /** True if `path` is a member. */
  has(path: FieldPath): boolean {
    const [head, ...rest] = path;
    if (head === undefined) return false;
    return rest.length === 0 ? this.hasMember(head) : this.at(head).has(rest);
  }

  /** Members of this set or of `other`. */
  union(other: FieldSet): FieldSet {
    return new FieldSet(combine(this.#children, other.#children, (a, b) => a || b, true));
  }

  /** Members of this set that are not members of `other`. */
  difference(other: FieldSet): FieldSet {
    return new FieldSet(combine(this.#children, other.#children, (a, b) => a && !b, false));
  }

  /** Members of both sets. */
  intersection(other: FieldSet): FieldSet {
    return new FieldSet(combine(this.#children, other.#children, (a, b) => a && b, 'both'));
  }

  /** This set without any member at or below one of `prefixes`. */
  withoutPrefixes(prefixes: readonly FieldPath[]): FieldSet {
    const pruned = copy(this.#children);
    for (const prefix of prefixes) {
      let level: Map<string, Node> | undefined = pruned;
      prefix.forEach((pe, i) => {
        if (level === undefined) return;
        const id = serializeElement(pe);
        if (i === prefix.length - 1) level.delete(id);
        else level = level.get(id)?.children;
      });
    }
    return new FieldSet(clean(pruned));
  }

  /** Every member path: at each level members before deeper paths, in FieldsV1 order. */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    const walk = (nodes: Nodes, prefix: FieldPath): void => {
      const sorted = sortedNodes(nodes);
      for (const node of sorted) if (node.member) out.push([...prefix, node.pe]);
      for (const node of sorted) walk(below(node), [...prefix, node.pe]);
    };
    walk(this.#children, []);
    return out;
  }

  /** The nodes of this level in FieldsV1 order, with their member flag and the set below them. */
  entries(): { pe: PathElement; member: boolean; below: FieldSet }[] {
    return sortedNodes(this.#children).map((node) => ({
      pe: node.pe,
      member: node.member,
      below: node.children === undefined ? EMPTY : new FieldSet(node.children),
    }));
  }
}

const EMPTY = new FieldSet();

/** The node `id` of a level, created (not a member, nothing below) when absent. */
function nodeAt(level: Map<string, Node>, pe: PathElement, id: string): Node {
  let node = level.get(id);
  if (node === undefined) {
    node = { pe, member: false, children: undefined };
    level.set(id, node);
  }
  return node;
}

function sortedNodes(nodes: Nodes): Node[] {
  return [...nodes.values()].sort((a, b) => compareElements(a.pe, b.pe));
}

function hasMembers(nodes: Nodes): boolean {
  for (const node of nodes.values()) if (node.member || hasMembers(below(node))) return true;
  return false;
}

function copy(nodes: Nodes): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const [id, node] of nodes) {
    const children = node.children === undefined ? undefined : copy(node.children);
    out.set(id, { pe: node.pe, member: node.member, children });
  }
  return out;
}

/** Drops nodes that neither are members nor have members below them. */
function clean(nodes: Map<string, Node>): Map<string, Node> {
  for (const [id, node] of nodes) {
    if (node.children !== undefined && clean(node.children).size === 0) node.children = undefined;
    if (!node.member && node.children === undefined) nodes.delete(id);
  }
  return nodes;
}

/**
 * Combines two levels: `keep` decides membership from the two flags; `visit` says which nodes to
 * visit (`true`: either side, `false`: the left side, `both`: nodes on both sides).
 */
function combine(
  left: Nodes,
  right: Nodes,
  keep: (a: boolean, b: boolean) => boolean,
  visit: boolean | 'both',
): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const [id, a] of left) combineNode(out, id, a, right.get(id), keep, visit);
  if (visit === true) {
    for (const [id, b] of right) if (!left.has(id)) combineNode(out, id, undefined, b, keep, visit);
  }
  return out;
}

/** Combines the node `id` of both sides into `out` (see {@link combine}). */
function combineNode(
  out: Map<string, Node>,
  id: string,
  a: Node | undefined,
  b: Node | undefined,
  keep: (a: boolean, b: boolean) => boolean,
  visit: boolean | 'both',
): void {
  if (visit === 'both' && (a === undefined || b === undefined)) return;
  // A subtree on one side only is the result as it is (union, difference): share it.
  const alone = b === undefined ? a : a === undefined ? b : undefined;
  if (alone !== undefined && visit !== 'both') {
    out.set(id, alone);
    return;
  }
  const pe = (a ?? b)?.pe;
  if (pe === undefined) return;
  const left = a?.children;
  const right = b?.children;
  const combined =
    left === undefined && right === undefined
      ? undefined
      : combine(left ?? NO_NODES, right ?? NO_NODES, keep, visit);
  const children = combined === undefined || combined.size === 0 ? undefined : combined;
  const member = keep(a?.member === true, b?.member === true);
  if (member || children !== undefined) out.set(id, { pe, member, children });
}
