// The product version is the root package.json's (the monorepo is released as one), read at build time.
import rootPackage from "../../../../package.json";

export const VERSION: string = rootPackage.version;
