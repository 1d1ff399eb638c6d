import { toNextJsHandler } from "better-auth/next-js";
import { authFor } from "../../../../server/auth.ts";
import { getDb } from "../../../../server/db.ts";

export const dynamic = "force-dynamic";

// better-auth's endpoints: sign-in/email, sign-out, get-session, … (sign-up is closed, see auth.ts).
export const { GET, POST } = toNextJsHandler((req: Request) => authFor(getDb()).handler(req));
