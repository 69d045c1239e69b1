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
}
