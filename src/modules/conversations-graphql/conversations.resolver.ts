import { Inject, UseGuards } from '@nestjs/common';
import { Args, Context, ID, Info, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import {
  type FragmentDefinitionNode,
  type GraphQLResolveInfo,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import { OidcRoleGuard } from 'src/modules/auth';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { AnswerBudget } from './answer-budget';
import { toConversationFilter } from './conversation-filters';
import { ConversationsService } from './conversations.service';
import { AddConversationTagToConversationInput } from './dto/add-conversation-tag-to-conversation.input';
import { CreateConversationTagInput } from './dto/create-conversation-tag.input';
import { DeleteConversationTagInput } from './dto/delete-conversation-tag.input';
import { DeleteConversationsInput } from './dto/delete-conversations.input';
import { RawConversationsInput } from './dto/raw-conversations.input';
import { RemoveConversationTagFromConversationInput } from './dto/remove-conversation-tag-from-conversation.input';
import { ConversationTagModel } from './models/conversation-tag.model';
import { RawConversationsOutputModel } from './models/raw-conversations-output.model';

/** Largest page the complexity estimate assumes when `limit` is not a literal or variable. */
const DEFAULT_LIMIT = 10;

/** The names a selection set selects, fragments and inline fragments followed. */
function selectedFields(
  sets: readonly SelectionSetNode[],
  fragments: Record<string, FragmentDefinitionNode>,
): Map<string, SelectionSetNode[]> {
  const fields = new Map<string, SelectionSetNode[]>();
  const pending = [...sets];
  const seen = new Set<string>();
  for (let set = pending.pop(); set !== undefined; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const list = fields.get(selection.name.value) ?? [];
        if (selection.selectionSet) list.push(selection.selectionSet);
        fields.set(selection.name.value, list);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        pending.push(selection.selectionSet);
      } else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments[selection.name.value];
        if (fragment) pending.push(fragment.selectionSet);
      }
    }
  }
  return fields;
}

/** Whether this rawConversations field selects `conversations { conversationEvents }`. */
function selectsEvents(info: GraphQLResolveInfo): boolean {
  const top = info.fieldNodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
  const conversations = selectedFields(top, info.fragments).get('conversations') ?? [];
  return selectedFields(conversations, info.fragments).has('conversationEvents');
}

/** The conversation-management API of the specification, plus the tag extensions. */
@Resolver()
@UseGuards(OidcRoleGuard)
export class ConversationsResolver {
  constructor(
    private readonly conversations: ConversationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Query(() => RawConversationsOutputModel, {
    description:
      'Conversations of an assistant, newest start first (then by id); count ignores paging.',
    complexity: ({ args, childComplexity }) => {
      const input = args.input as { limit?: number | null } | undefined;
      return 1 + Math.max(1, input?.limit ?? DEFAULT_LIMIT) * childComplexity;
    },
  })
  rawConversations(
    @Args('input', { type: () => RawConversationsInput }) input: RawConversationsInput,
    @Context('budget') budget: AnswerBudget,
    @Info() info: GraphQLResolveInfo,
  ): Promise<RawConversationsOutputModel> {
    return this.conversations.rawConversations(
      toConversationFilter(input, this.config.graphql.maxLimit),
      { events: selectsEvents(info), budget },
    );
  }

  @Mutation(() => Boolean, {
    description: 'True when the tag is on the conversation afterwards (also when it already was).',
  })
  addConversationTagToConversation(
    @Args('input', { type: () => AddConversationTagToConversationInput })
    input: AddConversationTagToConversationInput,
  ): Promise<boolean> {
    return this.conversations.addTag(input.conversationId, input.tagId);
  }

  @Mutation(() => Boolean, { description: 'Always true, also for unknown or unlinked ids.' })
  removeConversationTagFromConversation(
    @Args('input', { type: () => RemoveConversationTagFromConversationInput })
    input: RemoveConversationTagFromConversationInput,
  ): Promise<boolean> {
    return this.conversations.removeTag(input.conversationId, input.tagId);
  }

  @Mutation(() => Int, {
    description: 'Number of conversations deleted (with their events and tag links).',
  })
  deleteConversations(
    @Args('input', { type: () => DeleteConversationsInput }) input: DeleteConversationsInput,
  ): Promise<number> {
    return this.conversations.deleteConversations(input.conversationIds);
  }

  @Query(() => [ConversationTagModel], {
    description: 'Parley extension: the tags of an assistant, by name.',
  })
  conversationTags(
    @Args('assistantId', { type: () => ID }) assistantId: string,
  ): Promise<ConversationTagModel[]> {
    return this.conversations.tags(assistantId);
  }

  @Mutation(() => ConversationTagModel, {
    description:
      'Parley extension: creates a tag of an assistant, or returns its tag of that name.',
  })
  createConversationTag(
    @Args('input', { type: () => CreateConversationTagInput }) input: CreateConversationTagInput,
  ): Promise<ConversationTagModel> {
    return this.conversations.createTag(input.assistantId, input.name);
  }

  @Mutation(() => Boolean, {
    description:
      'Parley extension: deletes a tag and takes it off every conversation; true when it existed.',
  })
  deleteConversationTag(
    @Args('input', { type: () => DeleteConversationTagInput }) input: DeleteConversationTagInput,
  ): Promise<boolean> {
    return this.conversations.deleteTag(input.tagId);
  }
}
