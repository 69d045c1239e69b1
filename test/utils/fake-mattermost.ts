import { type FakePlatform, startFakePlatform } from 'test/utils/fake-platform';

/**
 * A stand-in for a Mattermost server's REST API v4 (`<server>/api/v4`), from Mattermost's public
 * API reference: `POST /api/v4/posts` creates a post and answers 201 with the post
 * (`id`, `create_at`, `user_id`, `channel_id`, `message`, `props` …). Every call is recorded.
 */
export async function startFakeMattermost(): Promise<FakePlatform> {
  let next = 0;
  return startFakePlatform((call) => {
    if (call.method === 'POST' && call.path === '/api/v4/posts') {
      const post = (call.body ?? {}) as Record<string, unknown>;
      next += 1;
      return {
        status: 201,
        body: {
          id: `post${next}`,
          create_at: 1700000000000 + next,
          update_at: 1700000000000 + next,
          user_id: 'botuserid',
          channel_id: post.channel_id,
          message: post.message ?? '',
          props: post.props ?? {},
          type: '',
        },
      };
    }
    return {
      status: 404,
      body: { id: 'api.context.404.app_error', message: 'Sorry, we could not find the page.' },
    };
  });
}

/**
 * The body of a Mattermost outgoing webhook request (Mattermost's "Outgoing webhooks" docs):
 * what the server POSTs to the callback URL when a post starts with a trigger word.
 */
export function outgoingWebhook(fields: {
  token: string;
  userId: string;
  channelId: string;
  text: string;
  triggerWord: string;
  postId: string;
}): Record<string, unknown> {
  return {
    token: fields.token,
    team_id: 'rdc9bgriktyx9p4kowh3dmgqyc',
    team_domain: 'parley',
    channel_id: fields.channelId,
    channel_name: 'town-square',
    timestamp: 1700000000000,
    user_id: fields.userId,
    user_name: 'ann',
    post_id: fields.postId,
    text: fields.text,
    trigger_word: fields.triggerWord,
    file_ids: '',
  };
}

/**
 * The body Mattermost POSTs to a message button's `integration.url` when it is clicked
 * (Mattermost's "Interactive messages" docs): who clicked where, and the button's `context`
 * as the bot posted it.
 */
export function actionCallback(fields: {
  userId: string;
  channelId: string;
  postId: string;
  context: unknown;
}): Record<string, unknown> {
  return {
    user_id: fields.userId,
    user_name: 'ann',
    channel_id: fields.channelId,
    channel_name: 'town-square',
    team_id: 'rdc9bgriktyx9p4kowh3dmgqyc',
    team_domain: 'parley',
    post_id: fields.postId,
    trigger_id: `trig-${fields.postId}`,
    type: '',
    data_source: '',
    context: fields.context,
  };
}
