import type { Request } from 'express';

interface RouteLayer {
  route?: { methods: Record<string, boolean> };
  match(path: string): boolean;
}

/** The methods that some registered route accepts for the request's path (for 405 + Allow). */
export function allowedMethodsFor(req: Request): string[] {
  const router = (req.app as unknown as { router?: { stack: RouteLayer[] } }).router;
  if (!router) return [];
  const methods = new Set<string>();
  for (const layer of router.stack) {
    // Nest mounts middleware as routes for every method ("all"): those say nothing about the path.
    if (!layer.route || Object.keys(layer.route.methods).length > 8) continue;
    let matches = false;
    try {
      matches = layer.match(req.path);
    } catch {
      matches = false;
    }
    if (!matches) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
