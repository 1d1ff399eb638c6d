import type { ReactNode } from "react";

const SIZES = {
  sm: {
    table: "w-full text-left text-sm",
    head: "text-xs uppercase text-slate-500",
    th: "py-1 pr-3 font-medium",
    body: "divide-y divide-slate-100",
  },
  xs: {
    table: "w-full text-left text-xs",
    head: "uppercase text-slate-500",
    th: "py-1 pr-2 font-medium",
    body: "divide-y divide-slate-100",
  },
} as const;

/**
 * A list's table once its query has data: the ready state beside Loading, Empty and LoadError
 * (query-state.tsx), under the same test id. `columns` are the headings in order, each distinct:
 * `false` leaves a column out, "" heads an actions column; the last column, at the table's edge,
 * has no right padding. `children` are the rows, whose cells pad themselves to match.
 */
export function DataTable({
  testId,
  columns,
  size = "sm",
  alignTop = false,
  children,
}: {
  testId: string;
  columns: readonly (string | false)[];
  /** Text size: "xs" for a table nested in a list item. */
  size?: keyof typeof SIZES;
  /** Cells start at the top of their row (for cells of several lines). */
  alignTop?: boolean;
  children: ReactNode;
}) {
  const s = SIZES[size];
  const shown = columns.filter((c) => c !== false);
  return (
    <table data-testid={testId} data-state="ready" className={s.table}>
      <thead className={s.head}>
        <tr>
          {shown.map((heading, i) => (
            <th key={heading} className={i === shown.length - 1 ? "py-1 font-medium" : s.th}>
              {heading}
            </th>
          ))}
        </tr>
      </thead>
      <tbody className={alignTop ? `${s.body} align-top` : s.body}>{children}</tbody>
    </table>
  );
}
