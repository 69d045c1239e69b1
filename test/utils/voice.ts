import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';

/** The texts of the user events of conversation `id`, from GET /conversations/{id}/tracker. */
export async function userTexts(url: string, id: string): Promise<string[]> {
  const body = (await request(url).get(`/conversations/${id}/tracker`).expect(200)).body as {
    events: Array<Record<string, unknown>>;
  };
  return body.events.filter((e) => e.event === 'user').map((e) => String(e.text));
}

/** Polls the tracker of `id` (every `pollMs`, 100 times at most) until a user event says `text`. */
export async function waitForUserText(
  url: string,
  id: string,
  text: string,
  pollMs = 200,
): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await userTexts(url, id)).includes(text)) return;
    await sleep(pollMs);
  }
  throw new Error(`no user message "${text}" in ${JSON.stringify(await userTexts(url, id))}`);
}
