import { Field, ID, ObjectType } from '@nestjs/graphql';

@ObjectType('ConversationTag', {
  description: 'Parley extension: a tag of an assistant that can be put on its conversations.',
})
export class ConversationTagModel {
  @Field(() => ID)
  id!: string;

  @Field()
  name!: string;

  @Field(() => ID)
  assistantId!: string;
}
