/**
 * Where a webhook may send (docs/notifications.md, "Where a hook may point"). A hook
 * is a URL a tenant admin types in, and the worker POSTs to it: without a rule it is a way to make
 * the deployment call into its own network (a metadata service, a database's HTTP port, the web
 * app's internals). So an address that is not public (loopback, private, link-local, shared,
 * reserved, multicast, documentation) is refused unless config.webhooks.allowPrivateTargets says
 * otherwise: on in dev (a receiver on 127.0.0.1), off in prod. The check runs twice: on the URL
 * when the hook is made (a literal address or `localhost`), and on every address the host name
 * resolves to when a delivery connects (the worker's lookup), so a name that points inward later
 * (DNS rebinding) is refused too. Pure: parsing only, no lookups.
 */
export type AddressKind = "public" | "loopback" | "private" | "link-local" | "reserved";

type Range = [prefix: number[], bits: number, kind: Exclude<AddressKind, "public">];

// IPv4 ranges that are not the public internet (IANA special-purpose registry).
const V4: Range[] = [
  [[0, 0, 0, 0], 8, "reserved"],
  [[10, 0, 0, 0], 8, "private"],
  [[100, 64, 0, 0], 10, "private"],
  [[127, 0, 0, 0], 8, "loopback"],
  [[169, 254, 0, 0], 16, "link-local"],
  [[172, 16, 0, 0], 12, "private"],
  [[192, 0, 0, 0], 24, "reserved"],
  [[192, 0, 2, 0], 24, "reserved"],
  [[192, 88, 99, 0], 24, "reserved"],
  [[192, 168, 0, 0], 16, "private"],
  [[198, 18, 0, 0], 15, "reserved"],
  [[198, 51, 100, 0], 24, "reserved"],
  [[203, 0, 113, 0], 24, "reserved"],
  [[224, 0, 0, 0], 4, "reserved"],
  [[240, 0, 0, 0], 4, "reserved"],
];

function inRange(bytes: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i < prefix.length && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

function parseV4(s: string): number[] | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : Number.NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null;
}

/** The 16 bytes of an IPv6 address (with or without an embedded IPv4 tail), or null. */
function parseV6(s: string): number[] | null {
  let text = s.toLowerCase();
  const zone = text.indexOf("%");
  if (zone !== -1) text = text.slice(0, zone);
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".")) {
    const v4 = parseV4(text.slice(lastColon + 1));
    if (!v4) return null;
    tail = v4;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (h: string | undefined) => (h ? h.split(":") : []);
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  const missing = 8 - head.length - rest.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (all.length !== 8 || !all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  const bytes = all.flatMap((g) => {
    const n = Number.parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

function kindOfV6(b: number[]): AddressKind {
  const zeros = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeros(16)) return "reserved";
  if (zeros(15) && b[15] === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address.
  const mapped = zeros(10) && b[10] === 0xff && b[11] === 0xff;
  const nat64 = inRange(b, [0x00, 0x64, 0xff, 0x9b], 32) && b.slice(4, 12).every((x) => x === 0);
  if (mapped || nat64 || zeros(12)) return kindOfV4(b.slice(12));
  if (inRange(b, [0xfe, 0x80], 10)) return "link-local";
  if (inRange(b, [0xfc], 7)) return "private";
  if (inRange(b, [0xff], 8)) return "reserved";
  if (inRange(b, [0x20, 0x01, 0x0d, 0xb8], 32)) return "reserved";
  if (inRange(b, [0x01, 0, 0, 0, 0, 0, 0, 0], 64)) return "reserved";
  return "public";
}

function kindOfV4(b: number[]): AddressKind {
  if (b.every((x) => x === 255)) return "reserved";
  return V4.find(([prefix, bits]) => inRange(b, prefix, bits))?.[2] ?? "public";
}

/** What kind of address `ip` is (IPv4 dotted, or IPv6 with or without brackets); null when it is no IP address. */
export function addressKind(ip: string): AddressKind | null {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const v4 = parseV4(bare);
  if (v4) return kindOfV4(v4);
  const v6 = bare.includes(":") ? parseV6(bare) : null;
  return v6 ? kindOfV6(v6) : null;
}

/** Names that are loopback by definition (RFC 6761), whatever a resolver says. */
export function isLoopbackName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost");
}

const ALLOW_HINT = "RHUMBATRON_WEBHOOK_ALLOW_PRIVATE=1 allows it (docs/notifications.md, Webhooks)";

/** Why a delivery may not connect to `address` (what `host` resolved to), or null when it may. */
export function webhookAddressProblem(host: string, address: string, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  const kind = addressKind(address) ?? "reserved";
  if (kind === "public") return null;
  const shown = host === address ? address : `${host} (${address})`;
  return `refused to connect to ${shown}: a ${kind} address is not a public one; ${ALLOW_HINT}`;
}

/**
 * Why `url` cannot be a webhook target, or null: http or https only, and (unless private targets
 * are allowed) no literal non-public address and no `localhost`. Names are checked again at delivery.
 */
export function webhookUrlProblem(url: string, allowPrivate: boolean): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "give an http:// or https:// URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "give an http:// or https:// URL";
  if (allowPrivate) return null;
  if (isLoopbackName(u.hostname)) return `${u.hostname} is this machine; ${ALLOW_HINT}`;
  return addressKind(u.hostname) === null ? null : webhookAddressProblem(u.hostname, u.hostname, false);
}
