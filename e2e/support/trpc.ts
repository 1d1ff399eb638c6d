import type { APIRequestContext, APIResponse } from "@playwright/test";

/** The demo tenant the seed creates (packages/db seed-demo.ts). */
export const DEMO_TENANT = "ten_demo";

/**
 * Calls to the product's tRPC API over HTTP, as the browser makes them (superjson: the input and the
 * result travel as `{ json }`). Pass `page.request` to act as the page's signed-in user.
 */
export function trpcQuery(api: APIRequestContext, path: string, input: unknown): Promise<APIResponse> {
  return api.get(`/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`);
}

export function trpcMutation(api: APIRequestContext, path: string, input: unknown): Promise<APIResponse> {
  return api.post(`/api/trpc/${path}`, { data: { json: input } });
}

/** The result's data of a successful call; throws with the server's answer otherwise. */
export async function trpcData<T>(res: APIResponse): Promise<T> {
  const body = (await res.json()) as { result?: { data?: { json?: T } }; error?: unknown };
  if (!res.ok() || body.result?.data === undefined) {
    throw new Error(`tRPC ${res.url()} answered ${res.status()}: ${JSON.stringify(body.error ?? body)}`);
  }
  return body.result.data.json as T;
}

/** The tRPC error code (FORBIDDEN, NOT_FOUND, …) of a refused call. */
export async function trpcErrorCode(res: APIResponse): Promise<string | undefined> {
  const body = (await res.json()) as { error?: { json?: { data?: { code?: string } } } };
  return body.error?.json?.data?.code;
}
