/** What to do when a CLI command finds no model: the path it looked at, and how to get one. */
export function noModelMessage(requested: string): string {
  return `no model archive found at ${requested}: train one first ("parley train", or "npm start" for the example assistant) or pass --model <archive or folder>`;
}
