import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { secretNameSchema, secretValueSchema, setSecretInput } from "./model.ts";
import { createSecretRedactor, findSecretsIn, redactSecrets, secretForms } from "./redact.ts";

const KEY = "sk-ant-api03-Zq9+x/Y7_w==t?k&v=1 ok";
const SECRETS = { ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: "sk-proj-0123456789abcdef" };

describe("secret names and values", () => {
  it("takes environment-variable names and refuses others, and the run's own", () => {
    for (const ok of ["A", "ANTHROPIC_API_KEY", "X1_2", `A${"B".repeat(63)}`]) {
      expect(secretNameSchema.safeParse(ok).success, ok).toBe(true);
    }
    for (const bad of [
      "",
      "a",
      "1A",
      "_A",
      "A-B",
      "A B",
      `A${"B".repeat(64)}`,
      "PATH",
      "RHUMBATRON_TOKEN",
      "LD_PRELOAD",
    ]) {
      expect(secretNameSchema.safeParse(bad).success, bad).toBe(false);
    }
  });

  it("takes a value of 1 byte to 8 KiB of UTF-8 without NUL", () => {
    expect(secretValueSchema.safeParse("x").success).toBe(true);
    expect(secretValueSchema.safeParse("x".repeat(8192)).success).toBe(true);
    expect(secretValueSchema.safeParse("x".repeat(8193)).success).toBe(false);
    // 4096 two-byte characters are 8192 bytes; one more is over.
    expect(secretValueSchema.safeParse("é".repeat(4096)).success).toBe(true);
    expect(secretValueSchema.safeParse("é".repeat(4097)).success).toBe(false);
    expect(secretValueSchema.safeParse("").success).toBe(false);
    expect(secretValueSchema.safeParse("a\u0000b").success).toBe(false);
    expect(setSecretInput.safeParse({ name: "K", value: "v" }).success).toBe(true);
  });
});

describe("redactSecrets", () => {
  it("replaces every occurrence of each value with its name's marker", () => {
    const text = `key=${KEY}\nagain ${KEY}; other sk-proj-0123456789abcdef.`;
    expect(redactSecrets(text, SECRETS)).toBe(
      "key=[secret ANTHROPIC_API_KEY]\nagain [secret ANTHROPIC_API_KEY]; other [secret OPENAI_API_KEY].",
    );
  });

  it("replaces the base64 (standard and URL-safe), URL-encoded and JSON-escaped forms of a long value", () => {
    const forms = [
      Buffer.from(KEY).toString("base64"),
      Buffer.from(KEY).toString("base64url"),
      encodeURIComponent(KEY),
      JSON.stringify({ k: `"${KEY}"` }),
    ];
    for (const form of forms) {
      const out = redactSecrets(`before ${form} after`, SECRETS);
      expect(out, form).toContain("[secret ANTHROPIC_API_KEY]");
      expect(findSecretsIn(out, SECRETS), form).toEqual([]);
    }
  });

  it("finds the value's base64 inside a longer base64 text, whatever its alignment (a Basic header)", () => {
    for (const user of ["a", "ab", "abc"]) {
      const header = `Authorization: Basic ${Buffer.from(`${user}:${KEY}`).toString("base64")}`;
      expect(findSecretsIn(header, SECRETS), user).toEqual(["ANTHROPIC_API_KEY"]);
      expect(redactSecrets(header, SECRETS), user).toContain("[secret ANTHROPIC_API_KEY]");
    }
  });

  it("looks for a short value only as it is", () => {
    expect(secretForms("abc")).toEqual(["abc"]);
    expect(redactSecrets(`x abc ${Buffer.from("abc").toString("base64")}`, { S: "abc" })).toBe("x [secret S] YWJj");
  });

  it("cuts the longer value out first when one value contains another", () => {
    const s = { LONG: "prefix-0123456789", SHORT: "0123456789" };
    expect(redactSecrets("a prefix-0123456789 b 0123456789", s)).toBe("a [secret LONG] b [secret SHORT]");
  });

  it("leaves text without a secret, and text given no secrets, unchanged", () => {
    const text = "nothing to see\nhere $& $1";
    expect(redactSecrets(text, SECRETS)).toBe(text);
    expect(redactSecrets(text, {})).toBe(text);
    expect(redactSecrets(text, { EMPTY: "" })).toBe(text);
  });

  it("treats regular-expression characters in a value literally", () => {
    expect(redactSecrets("a.b a*b (x)", { S: "a*b", T: "(x)" })).toBe("a.b [secret S] [secret T]");
  });
});

describe("findSecretsIn", () => {
  it("names each secret found in a text, sorted, and none in a clean one", () => {
    expect(findSecretsIn(`+OPENAI=sk-proj-0123456789abcdef\n+A=${KEY}`, SECRETS)).toEqual([
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
    ]);
    expect(findSecretsIn("+const x = 1;\n", SECRETS)).toEqual([]);
  });

  it("searches bytes as UTF-8, non-ASCII values included", () => {
    const secrets = { K: "clé-secrète-ünïcode" };
    const bytes = new Uint8Array([0, 255, ...new TextEncoder().encode("x clé-secrète-ünïcode y"), 0]);
    expect(findSecretsIn(bytes, secrets)).toEqual(["K"]);
    expect(findSecretsIn(new TextEncoder().encode(Buffer.from(secrets.K).toString("base64")), secrets)).toEqual(["K"]);
    expect(findSecretsIn(new Uint8Array([0, 1, 2, 255]), secrets)).toEqual([]);
    // A large file: searched whole.
    const big = new Uint8Array(200_000);
    big.set(new TextEncoder().encode(secrets.K), 150_000);
    expect(findSecretsIn(big, secrets)).toEqual(["K"]);
  });
});

describe("createSecretRedactor", () => {
  const text = `start ${KEY} middle ${Buffer.from(KEY).toString("base64")} sk-proj-0123456789abcdef end ${KEY}`;

  it("gives what redactSecrets gives for the whole text, however the text is cut into pieces", () => {
    const whole = redactSecrets(text, SECRETS);
    expect(whole).not.toContain(KEY);
    for (const size of [1, 2, 3, 5, 7, 13, 40, text.length]) {
      const r = createSecretRedactor(SECRETS);
      let out = "";
      for (let i = 0; i < text.length; i += size) out += r.push(text.slice(i, i + size));
      out += r.end();
      expect(out, `pieces of ${size}`).toBe(whole);
    }
  });

  it("writes text as it comes once it cannot begin a value, and passes everything through with no secrets", () => {
    // A 7-character value: the last 6 characters are held back until the next piece or the end.
    const r = createSecretRedactor({ S: "0123456" });
    expect(r.push("hello world, ")).toBe("hello w");
    expect(r.push("and 01234")).toBe("orld, and");
    expect(r.push("56!")).toBe(" [secret S]");
    expect(r.end()).toBe("!");
    const none = createSecretRedactor({});
    expect(none.push("abc")).toBe("abc");
    expect(none.end()).toBe("");
  });
});
