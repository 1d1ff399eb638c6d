import { getSessionCookie } from "better-auth/cookies";
import { type NextRequest, NextResponse } from "next/server";

/**
 * Pages need a signed-in person: a request without a session cookie goes to /sign-in, which brings
 * it back here afterwards (`next`). Only the cookie's presence is checked (an optimistic check, as
 * Next's docs advise): whether the session is live is decided by resolveCaller in the page and in
 * every tRPC call. API routes answer 401 themselves instead of redirecting.
 */
export function proxy(request: NextRequest): NextResponse {
  if (getSessionCookie(request)) return NextResponse.next();
  const url = new URL("/sign-in", request.url);
  const { pathname, search } = request.nextUrl;
  if (pathname !== "/") url.searchParams.set("next", `${pathname}${search}`);
  return NextResponse.redirect(url);
}

export const config = {
  // Everything but the API, Next's assets, static files and the sign-in page itself.
  matcher: ["/((?!api/|_next/|sign-in|icon\\.svg|favicon\\.ico|robots\\.txt).*)"],
};
