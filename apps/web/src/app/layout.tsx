import type { Metadata } from "next";
import type { ReactNode } from "react";
import { AppHeader } from "../components/app-header.tsx";
import { HydratedMark } from "../components/hydrated-mark.tsx";
import { SandboxNotice } from "../components/sandbox-notice.tsx";
import { loadShell } from "../server/shell.ts";
import { TRPCReactProvider } from "../trpc/client.tsx";
import "./globals.css";

export const metadata: Metadata = {
  title: "Rhumbatron",
  description: "Control plane where AI coding agents change a software project safely.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  const shell = await loadShell();
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 font-sans text-slate-900 antialiased">
        <TRPCReactProvider>
          <HydratedMark />
          <AppHeader shell={shell} />
          <SandboxNotice shell={shell} />
          <main className="mx-auto max-w-5xl px-6 py-8">{children}</main>
        </TRPCReactProvider>
      </body>
    </html>
  );
}
