// Values the vitest global setup provides to every test file (see global-setup.ts).
declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

export {};
