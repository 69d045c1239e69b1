import { type ActionEndpoint, type Tracer, type TrackerStore } from 'src/core';
import { parleyMetrics } from './parley-metrics';

/** Tracker store calls whose span says they read, and those that write. */
const READS = new Set(['retrieve', 'retrieveVersioned', 'retrieveAfter', 'version', 'exists']);

/**
 * The tracker store with every call timed (`parley_tracker_store_query_seconds{op}`, op = the
 * method) and traced (`parley.tracker_store.<op>`). A proxy, so methods a store adds later
 * are measured too.
 */
export function instrumentTrackerStore<S extends TrackerStore>(store: S, tracer: Tracer): S {
  const timing = parleyMetrics.trackerStoreQuery();
  return new Proxy(store, {
    get(target, property, receiver): unknown {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      if (property === 'constructor') return value;
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]): unknown => {
        const end = timing.startTimer({ op: property });
        const kind = READS.has(property) ? 'read' : 'write';
        return tracer.inSpan(
          `parley.tracker_store.${property}`,
          { 'parley.tracker_store.op': kind },
          () => {
            try {
              const result = method.apply(target, args);
              if (result instanceof Promise) return result.finally(() => end());
              end();
              return result;
            } catch (error) {
              end();
              throw error;
            }
          },
        );
      };
    },
  });
}

/**
 * The action server client with every call traced (`parley.action_server.call`); its calls are
 * timed by the client's own observer (`parley_action_server_request_duration_seconds`).
 */
export function instrumentActionServer(endpoint: ActionEndpoint, tracer: Tracer): ActionEndpoint {
  return new Proxy(endpoint, {
    get(target, property, receiver): unknown {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property !== 'call' || typeof value !== 'function') return value;
      const call = value as ActionEndpoint['call'];
      return (...args: Parameters<ActionEndpoint['call']>) =>
        tracer.inSpan('parley.action_server.call', { 'parley.action': args[0] }, () =>
          call.apply(target, args),
        );
    },
  });
}
