import type { Request } from 'express';
import { requireConversationId } from 'src/core';

/**
 * The conversation id of a `/conversations/<id>/…` route, unchecked (the auth guard reads it).
 * Ids may contain `/` and other odd characters (Rasa's `path` converter), so routes capture
 * them with a `*conversationId` wildcard; Express hands the wildcard over as decoded path
 * segments, joined here again.
 */
export function conversationIdOf(req: Request): string | null {
  const value: unknown = (req.params as Record<string, unknown>).conversationId;
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.map((v) => String(v as string)).join('/');
  return typeof value === 'string' ? value : null;
}

/** The conversation id of a `/conversations/<id>/…` route, checked against the rules. */
export function validConversationIdOf(req: Request): string {
  return requireConversationId(conversationIdOf(req) ?? '');
}
