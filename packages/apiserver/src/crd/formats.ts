/**
 * String formats kube-apiserver 1.32 validates (kube-openapi's `strfmt` registry as filtered by
 * apiextensions): names are normalised by dropping `-`, so `date-time` is `datetime`. Unsupported
 * formats are dropped from the schema before validation and never fail.
 */

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const DATE_TIME_TAIL = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const MAC =
  /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}[:-]){7}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$/;
const DURATION_UNITS = /((\d+)\s*([A-Za-zµ]+))/g;
const UNIT_NAMES = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];

/** RFC 3339 full-date with a real calendar day (Go's `time.Parse("2006-01-02")`). */
export function isDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (m === null) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days;
}

/** strfmt's `IsDateTime`: a date, a `T` (any case), then `hh:mm:ss[.frac](z|±hh:mm)`. */
export function isDateTime(text: string): boolean {
  if (text.length < 4) return false;
  const parts = text.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0] ?? '')) return false;
  const m = DATE_TIME_TAIL.exec(parts[1] ?? '');
  if (m === null) return false;
  return (m[1] ?? '') <= '23' && (m[2] ?? '') <= '59' && (m[3] ?? '') <= '59';
}

function isIPv4(text: string): boolean {
  const parts = text.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

function isIPv6(text: string): boolean {
  if (!text.includes(':')) return false;
  let head = text;
  const lastColon = head.lastIndexOf(':');
  const tail = head.slice(lastColon + 1);
  if (tail.includes('.')) {
    if (!isIPv4(tail)) return false;
    head = `${head.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return false;
  const valid = (g: string): boolean => /^[0-9A-Fa-f]{1,4}$/.test(g);
  if (halves.length === 1) {
    const groups = head.split(':');
    return groups.length === 8 && groups.every(valid);
  }
  const [left = '', right = ''] = halves;
  const l = left === '' ? [] : left.split(':');
  const r = right === '' ? [] : right.split(':');
  return l.length + r.length <= 7 && [...l, ...r].every(valid);
}

function isCIDR(text: string): boolean {
  const slash = text.indexOf('/');
  if (slash < 0) return false;
  const ip = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  if (isIPv4(ip)) return Number(bits) <= 32;
  return isIPv6(ip) && Number(bits) <= 128;
}

function isURI(text: string): boolean {
  if (text === '' || /\s/.test(text)) return false;
  if (text.startsWith('/')) return true;
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(text);
}

function isBase64(text: string): boolean {
  return /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(text);
}

function isDuration(text: string): boolean {
  if (/^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/.test(text) || text === '0') return true;
  for (const match of text.matchAll(DURATION_UNITS)) {
    const unit = (match[3] ?? '').toLowerCase().trim();
    for (const variants of UNIT_NAMES) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v === unit)) return true;
    }
  }
  return false;
}

function isbn10(text: string): boolean {
  const s = text.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (i + 1) * (s[i] === 'X' ? 10 : Number(s[i]));
  return sum % 11 === 0;
}

function isbn13(text: string): boolean {
  const s = text.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(s[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(s[12]);
}

function isCreditCard(text: string): boolean {
  const s = text.replace(/[^0-9]/g, '');
  if (
    !/^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/.test(
      s,
    )
  ) {
    return false;
  }
  let sum = 0;
  let double = false;
  for (let i = s.length - 1; i >= 0; i--) {
    let d = Number(s[i]);
    if (double) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function isRGB(text: string): boolean {
  const m = /^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$/.exec(text);
  return m !== null && [m[1], m[2], m[3]].every((v) => Number(v) <= 255);
}

function isHostname(text: string): boolean {
  return HOSTNAME.test(text) && text.length <= 255 && text.split('.').every((p) => p.length <= 63);
}

const VALIDATORS: Readonly<Record<string, (text: string) => boolean>> = {
  bsonobjectid: (t) => /^[0-9a-fA-F]{24}$/.test(t),
  uri: isURI,
  email: (t) => EMAIL.test(t.trim()) || /^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(t),
  hostname: isHostname,
  ipv4: isIPv4,
  ipv6: isIPv6,
  cidr: isCIDR,
  mac: (t) => MAC.test(t),
  uuid: (t) => UUID.test(t),
  uuid3: (t) => UUID3.test(t),
  uuid4: (t) => UUID4.test(t),
  uuid5: (t) => UUID5.test(t),
  isbn: (t) => isbn10(t) || isbn13(t),
  isbn10,
  isbn13,
  creditcard: isCreditCard,
  ssn: (t) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(t),
  hexcolor: (t) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(t),
  rgbcolor: isRGB,
  byte: isBase64,
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
};

/** Normalises a format name the way strfmt does (drops `-`). */
export function normalizeFormat(format: string): string {
  return format.replaceAll('-', '');
}

/** True if kube-apiserver 1.32 knows this string format (others are stripped from schemas). */
export function isSupportedFormat(format: string): boolean {
  return Object.hasOwn(VALIDATORS, normalizeFormat(format));
}

/** Validates `text` against a supported format; unknown formats accept anything. */
export function matchesFormat(format: string, text: string): boolean {
  const normalized = normalizeFormat(format);
  const validator = Object.hasOwn(VALIDATORS, normalized) ? VALIDATORS[normalized] : undefined;
  return validator === undefined ? true : validator(text);
}
