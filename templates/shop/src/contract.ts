// Prints the route table as one JSON line: {"routes":["DELETE /api/cart/items/:id", ...]}.
// Used by the contract check (`npm run contract`).

import { routeTable } from "./routes.js";

console.log(JSON.stringify({ routes: routeTable() }));
