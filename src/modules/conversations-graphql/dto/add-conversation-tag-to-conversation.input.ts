import { Field, ID, InputType } from '@nestjs/graphql';

@InputType('AddConversationTagToConversationInput')
export class AddConversationTagToConversationInput {
  @Field(() => ID)
  conversationId!: string;

  @Field(() => ID)
  tagId!: string;
}
