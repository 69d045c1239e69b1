import { Field, ID, InputType } from '@nestjs/graphql';

@InputType('DeleteConversationTagInput', {
  description: 'Extension (not in the seed).',
})
export class DeleteConversationTagInput {
  @Field(() => ID)
  tagId!: string;
}
