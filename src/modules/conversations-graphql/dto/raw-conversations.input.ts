import { Field, ID, InputType, Int } from '@nestjs/graphql';

@InputType('RawConversationsInput')
export class RawConversationsInput {
  @Field(() => ID, { description: 'Identifier of the assistant (config.yml assistant_id).' })
  assistantId!: string;

  @Field(() => String, {
    nullable: true,
    description:
      'Earliest conversation start, inclusive: ISO 8601 UTC, YYYY-MM-DDTHH:MM:SS[.sss]Z.',
  })
  fromTime?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Latest conversation start, inclusive; same format as fromTime.',
  })
  toTime?: string | null;

  @Field(() => [ID], {
    nullable: true,
    description:
      'Parley extension: only conversations carrying every one of these tags (at most 20); count counts those.',
  })
  tagIds?: string[] | null;

  @Field(() => Int, {
    nullable: true,
    defaultValue: 10,
    description: 'Maximum number of conversations returned (at most GRAPHQL_MAX_LIMIT).',
  })
  limit?: number | null;

  @Field(() => Int, {
    nullable: true,
    defaultValue: 0,
    description: 'Number of conversations skipped, for paging.',
  })
  offset?: number | null;

  @Field(() => Int, {
    nullable: true,
    defaultValue: 0,
    description:
      'Parley extension: events skipped at the start of each conversation, for paging long conversations.',
  })
  eventOffset?: number | null;

  @Field(() => Int, {
    nullable: true,
    description:
      'Parley extension: most events returned per conversation; omitted: all after eventOffset. One answer holds at most GRAPHQL_MAX_EVENTS events and GRAPHQL_MAX_ANSWER_BYTES bytes of them, else BAD_USER_INPUT.',
  })
  eventLimit?: number | null;
}
