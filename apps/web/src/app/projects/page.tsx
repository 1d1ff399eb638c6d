import { redirect } from "next/navigation";

/** The project list lives on the home page. */
export default function ProjectsPage() {
  redirect("/");
}
