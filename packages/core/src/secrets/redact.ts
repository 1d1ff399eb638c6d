/**
 * Keeping tenant secrets out of what a run leaves behind (docs/agents.md, Secrets): its logs, transcript and
 * Evidence are redacted with redactSecrets, and a diff in which findSecretsIn finds a value fails
 * the run. Both look for each value as given and, for a value of 8 characters or more, in the forms
 * a program commonly turns it into: base64 (standard and URL-safe, at any alignment inside a longer
 * base64 text, as in an `Authorization: Basic` header), URL encoding and a JSON string's escaping.
 * Pure: strings and bytes in, strings out.
 */

/** Values shorter than this are looked for only as they are: their encoded forms match too much else. */
export const ENCODED_FORMS_MIN_LENGTH = 8;

/** A secret's name → its value, as the run's environment gets them. */
export type SecretValues = Readonly<Record<string, string>>;

export const secretMarker = (name: string) => `[secret ${name}]`;

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = Math.ceil((Math.min(3, bytes.length - i) * 8) / 6);
    for (let c = 0; c < chars; c++) out += B64[(n >> (18 - 6 * c)) & 63];
  }
  return out;
}

/**
 * The base64 characters that depend only on the value's bytes, when the value starts `offset`
 * bytes into the encoded text: the characters that also carry bits of what comes before or after
 * are left out, so the form is found whatever surrounds the value.
 */
function base64Core(bytes: Uint8Array, offset: number): string {
  const shifted = new Uint8Array(offset + bytes.length);
  shifted.set(bytes, offset);
  return base64(shifted).slice(Math.ceil((offset * 8) / 6), Math.floor(((offset + bytes.length) * 8) / 6));
}

/** Every form of one value that is looked for, the value itself first. */
export function secretForms(value: string): string[] {
  if (!value) return [];
  const forms = new Set([value]);
  if (value.length >= ENCODED_FORMS_MIN_LENGTH) {
    const bytes = new TextEncoder().encode(value);
    for (const offset of [0, 1, 2]) {
      const core = base64Core(bytes, offset);
      forms.add(core);
      forms.add(core.replaceAll("+", "-").replaceAll("/", "_"));
    }
    const url = encodeURIComponent(value);
    forms.add(url);
    forms.add(url.replaceAll("%20", "+"));
    forms.add(JSON.stringify(value).slice(1, -1));
  }
  return [...forms];
}

interface Form {
  text: string;
  name: string;
}

/** Every form of every value, longest first (a value inside another's form is then not cut out of it). */
function formsOf(secrets: SecretValues): Form[] {
  const forms: Form[] = [];
  for (const [name, value] of Object.entries(secrets)) {
    for (const text of secretForms(value)) forms.push({ text, name });
  }
  return forms.sort((a, b) => b.text.length - a.text.length || a.name.localeCompare(b.name));
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

interface Matcher {
  pattern: RegExp;
  byText: Map<string, string>;
  /** The longest form's length. */
  longest: number;
}

function matcherOf(secrets: SecretValues): Matcher | null {
  const forms = formsOf(secrets);
  if (forms.length === 0) return null;
  const byText = new Map<string, string>();
  for (const f of forms) if (!byText.has(f.text)) byText.set(f.text, f.name);
  const pattern = new RegExp([...byText.keys()].map(escapeRegExp).join("|"), "g");
  return { pattern, byText, longest: forms[0]?.text.length ?? 0 };
}

const redactWith = (m: Matcher, text: string) =>
  text.replace(m.pattern, (found) => secretMarker(m.byText.get(found) ?? ""));

/**
 * `text` with every occurrence of each secret's value, and of its encoded forms, replaced by
 * `[secret NAME]`. Text without a secret comes back unchanged.
 */
export function redactSecrets(text: string, secrets: SecretValues): string {
  const m = matcherOf(secrets);
  return m && text.length > 0 ? redactWith(m, text) : text;
}

/**
 * redactSecrets for output that arrives in pieces (a process's stdout): a value split across two
 * pieces is still redacted. `push` returns the redacted text that is safe to write so far, holding
 * back the last few characters that could begin a value; `end` returns the rest.
 */
export function createSecretRedactor(secrets: SecretValues): { push(chunk: string): string; end(): string } {
  const m = matcherOf(secrets);
  let held = "";
  return {
    push(chunk) {
      if (!m) return chunk;
      held += chunk;
      // Everything before `cut` is written now; a match that runs across it moves it to its end.
      let cut = Math.max(0, held.length - (m.longest - 1));
      m.pattern.lastIndex = 0;
      for (let found = m.pattern.exec(held); found; found = m.pattern.exec(held)) {
        const end = found.index + found[0].length;
        if (found.index >= cut) break;
        if (end > cut) cut = end;
      }
      const out = redactWith(m, held.slice(0, cut));
      held = held.slice(cut);
      return out;
    },
    end() {
      const out = m ? redactWith(m, held) : held;
      held = "";
      return out;
    },
  };
}

/** Bytes as a string of one character per byte, so a byte sequence is found with indexOf. */
function byteString(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return out;
}

/**
 * The names of the secrets whose value, or an encoded form of it, occurs in `content` (a text, or
 * bytes such as a diff or a file, searched byte for byte as UTF-8), sorted. Empty when none does.
 */
export function findSecretsIn(content: string | Uint8Array, secrets: SecretValues): string[] {
  const haystack = typeof content === "string" ? content : byteString(content);
  const found = new Set<string>();
  for (const { text, name } of formsOf(secrets)) {
    if (found.has(name)) continue;
    const needle = typeof content === "string" ? text : byteString(new TextEncoder().encode(text));
    if (haystack.includes(needle)) found.add(name);
  }
  return [...found].sort();
}
