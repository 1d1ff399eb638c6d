import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Text sealed for the server's own later reading (import credentials, tenant secrets): AES-256-GCM
 * under a key derived (HKDF-SHA-256) from the server's auth secret, RHUMBATRON_AUTH_SECRET. `purpose`
 * is HKDF's info, so each use has a key of its own; `aad` binds the text to the row it belongs to
 * (a sealed value copied to another row does not open). Format: `v1.<iv>.<tag>.<ciphertext>`, base64.
 */
export interface SealOptions {
  /** The server's auth secret. */
  secret: string;
  /** What the key is for (HKDF info), e.g. "import credentials". */
  purpose: string;
  /** Authenticated, not encrypted: what the sealed text belongs to. */
  aad: string;
}

function key(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "rhumbatron", purpose, 32));
}

export function sealText(plain: string, o: SealOptions): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key(o.secret, o.purpose), iv);
  cipher.setAAD(Buffer.from(o.aad));
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64"), cipher.getAuthTag().toString("base64"), body.toString("base64")].join(".");
}

/** The text, or null when it was sealed with another secret, for another purpose or another `aad`, or is damaged. */
export function openSealed(sealed: string, o: SealOptions): string | null {
  const [v, iv, tag, body] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || !body) return null;
  try {
    const d = createDecipheriv("aes-256-gcm", key(o.secret, o.purpose), Buffer.from(iv, "base64"));
    d.setAAD(Buffer.from(o.aad));
    d.setAuthTag(Buffer.from(tag, "base64"));
    return Buffer.concat([d.update(Buffer.from(body, "base64")), d.final()]).toString("utf8");
  } catch {
    return null;
  }
}
