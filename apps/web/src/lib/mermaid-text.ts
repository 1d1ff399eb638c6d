/**
 * Text that goes inside a quoted mermaid label. Mermaid reads `#name;` and `#code;` as entity
 * codes, so `#` is escaped first and the characters that would end the string or start markup
 * are written as entities after it. Line breaks become spaces; long text is cut with an ellipsis.
 */
export function mermaidText(value: string, max = 80): string {
  const flat = value.replace(/[\r\n\t]+/g, " ").trim();
  const cut = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  return cut
    .replace(/#/g, "#35;")
    .replace(/&/g, "#amp;")
    .replace(/"/g, "#quot;")
    .replace(/</g, "#lt;")
    .replace(/>/g, "#gt;")
    .replace(/`/g, "#96;");
}
