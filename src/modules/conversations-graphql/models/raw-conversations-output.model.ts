import { Field, Int, ObjectType } from '@nestjs/graphql';
import { RawConversationModel } from './raw-conversation.model';

@ObjectType('RawConversationsOutput')
export class RawConversationsOutputModel {
  @Field(() => [RawConversationModel], { description: 'The selected page of conversations.' })
  conversations!: RawConversationModel[];

  @Field(() => Int, {
    description: 'Number of conversations matching the criteria, whatever limit and offset.',
  })
  count!: number;
}
