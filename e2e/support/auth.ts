import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { type APIRequestContext, request } from "@playwright/test";

/** The browser state (session cookie) of the signed-in demo admin, written once by global-setup. */
export const DEMO_ADMIN_STATE = fileURLToPath(new URL("../../.data/e2e/demo-admin.json", import.meta.url));

/** A browser state with no cookies: for specs that start signed out. */
export const SIGNED_OUT = { cookies: [], origins: [] };

/** A browser state (cookies and origins) as Playwright stores it. */
export type StorageState = Awaited<ReturnType<APIRequestContext["storageState"]>>;

/**
 * Signs in through the product's own endpoint, as the sign-in form does, and returns the browser
 * state (the session cookie). With `path`, the state is also written there.
 */
export async function signIn(baseURL: string, email: string, password: string, path?: string): Promise<StorageState> {
  const api = await request.newContext({ baseURL });
  try {
    const res = await api.post("/api/auth/sign-in/email", {
      data: { email, password },
      headers: { origin: baseURL },
    });
    if (!res.ok()) throw new Error(`e2e: ${email} could not sign in (${res.status()}): ${await res.text()}`);
    if (path) mkdirSync(dirname(path), { recursive: true });
    return await api.storageState(path ? { path } : {});
  } finally {
    await api.dispose();
  }
}

/** Signs the demo admin in and saves the cookie where playwright.config.ts reads it. */
export async function saveSignedInState(baseURL: string, email: string, password: string): Promise<void> {
  await signIn(baseURL, email, password, DEMO_ADMIN_STATE);
}
