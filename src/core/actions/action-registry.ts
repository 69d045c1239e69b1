import { type Action } from 'src/core/actions/action';
import {
  defaultActions,
  EndToEndResponseAction,
  HangupAction,
  ResponseAction,
  RetrievalAction,
} from 'src/core/actions/default-actions';
import { FormAction } from 'src/core/actions/form-action';
import { RemoteAction } from 'src/core/actions/remote-action';
import { type Domain } from 'src/core/domain/domain';
import { ACTION_HANGUP_NAME } from 'src/core/domain/domain-constants';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { patternActions } from 'src/core/flows/pattern-actions';

const DEFAULTS = defaultActions();
const HANGUP = new HangupAction();
/** Rasa Pro's built-in CALM actions (`action_run_slot_rejections`, `action_cancel_flow`, …). */
const PATTERN_ACTIONS = patternActions();

/**
 * Rasa's `action_for_name_or_text`: a default action (unless the domain lists a custom action of
 * that name) → a retrieval action `utter_<retrieval intent>` → a response `utter_*` → a form
 * (unless a custom action of that name exists) → a custom action on the action server. Every
 * `utter_*` name is a response action, even when the domain also lists it under `actions:`
 * (Rasa's `ActionBotResponse`: rendered from the domain responses or the `nlg` endpoint, never
 * sent to the action server). Names the domain does not know throw `DIALOGUE.UNKNOWN_ACTION`.
 */
export function actionFor(name: string, domain: Domain): Action {
  const known = domain.actionNamesOrTexts;
  if (!known.includes(name)) {
    throw new DialogueError(
      'DIALOGUE.UNKNOWN_ACTION',
      `Cannot access action '${name}', as that name is not a registered action for this domain. Available actions are: ${known.filter((a) => a !== '...').join(', ')}`,
      { action: name },
    );
  }
  // CALM: the patterns' built-in actions, whenever the domain knows the name (also when the
  // flows' domain lists them under `actions:`).
  const pattern = PATTERN_ACTIONS.get(name);
  if (pattern) return pattern;
  const custom = domain.customActions.includes(name);
  const builtIn = DEFAULTS.get(name);
  if (builtIn && !custom) return builtIn;
  if (name === ACTION_HANGUP_NAME) return HANGUP;
  if (name.startsWith('utter_') && domain.retrievalIntents.includes(name.slice('utter_'.length))) {
    return new RetrievalAction(name);
  }
  if (domain.actionTexts.includes(name)) return new EndToEndResponseAction(name);
  if (name.startsWith('utter_')) return new ResponseAction(name);
  if (domain.formNames.includes(name) && !custom) return new FormAction(name);
  return new RemoteAction(name);
}
