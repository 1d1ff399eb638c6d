import type { ReactNode } from "react";

/** A page's heading; `children`, where given, is a line under it on what the page is for. */
export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  if (children == null) return <h1 className="text-xl font-semibold">{title}</h1>;
  return (
    <div>
      <h1 className="text-xl font-semibold">{title}</h1>
      <p className="mt-1 text-sm text-slate-600">{children}</p>
    </div>
  );
}

/** The way back to a project from a page under it; `here` names that page after the link. */
export function ProjectCrumb({ projectId, here }: { projectId: string; here?: string }) {
  return (
    <p className="text-sm text-slate-500">
      <a className="underline" href={`/projects/${projectId}`}>
        Project
      </a>
      {here && ` / ${here}`}
    </p>
  );
}

/** A page under a project: the way back to it, the page's header, then its content. */
export function ProjectSubpage({
  projectId,
  title,
  description,
  children,
}: {
  projectId: string;
  title: string;
  /** The line under the heading, if the page needs one. */
  description?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section className="space-y-4">
      <ProjectCrumb projectId={projectId} />
      <PageHeader title={title}>{description}</PageHeader>
      {children}
    </section>
  );
}
