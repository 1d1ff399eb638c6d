"use client";

import { useEffect } from "react";

/**
 * Marks the page `data-hydrated` once React has taken over the server's HTML: from then on a form's
 * fields keep what is typed. Before it, typing into a server-rendered field is lost when React
 * hydrates the form with its own state; the e2e specs wait for the mark before they type
 * (e2e/support/hydrated.ts).
 */
export function HydratedMark() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  return null;
}
