"use client";

import { useEffect, useState } from "react";

const UTC = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });

/**
 * A moment as people read it: in the reader's own time zone and language once the page runs in
 * their browser. The server's first paint (and a page without JavaScript) says the same moment in
 * UTC, named as such, so the two never disagree about which moment it is; the exact instant is the
 * element's `dateTime` and its tooltip.
 */
export function Time({ value, testId }: { value: Date | string; testId?: string }) {
  const ms = (typeof value === "string" ? new Date(value) : value).getTime();
  const [local, setLocal] = useState<string | null>(null);
  useEffect(() => setLocal(new Date(ms).toLocaleString()), [ms]);
  const iso = new Date(ms).toISOString();
  return (
    <time dateTime={iso} title={iso} data-testid={testId}>
      {local ?? `${UTC.format(ms)} UTC`}
    </time>
  );
}
