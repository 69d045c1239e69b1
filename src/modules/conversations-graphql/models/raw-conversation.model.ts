import { Field, ID, Int, ObjectType } from '@nestjs/graphql';
import GraphQLJSON from 'graphql-type-json';
import { ConversationTagModel } from './conversation-tag.model';

@ObjectType('RawConversation')
export class RawConversationModel {
  @Field(() => ID, { description: 'Conversation identifier (the sender id).' })
  id!: string;

  @Field(() => [GraphQLJSON], {
    description:
      'The stored events of the conversation, verbatim and in order: all of them, or the window eventOffset/eventLimit of the input.',
  })
  conversationEvents!: Array<Record<string, unknown>>;

  @Field(() => Int, {
    description:
      'Parley extension: number of stored events of the conversation, whatever the event window.',
  })
  eventCount!: number;

  @Field(() => [ConversationTagModel], {
    description: 'Parley extension: the tags on the conversation, by name.',
  })
  tags!: ConversationTagModel[];
}
