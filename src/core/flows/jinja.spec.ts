import { isTemplate, renderTemplate, TemplateError } from 'src/core/flows/jinja';

describe('renderTemplate', () => {
  describe('the default pattern responses', () => {
    it('utter_corrected_previous_input', () => {
      const text =
        "Ok, I am updating {{ context.corrected_slots.keys()|join(', ') }} to " +
        "{{ context.corrected_slots.values()|join(', ') }} respectively.";
      expect(
        renderTemplate(text, { context: { corrected_slots: { amount: 50, recipient: 'Jo' } } }),
      ).toBe('Ok, I am updating amount, recipient to 50, Jo respectively.');
      expect(renderTemplate(text, { context: { corrected_slots: { confirmed: true } } })).toBe(
        'Ok, I am updating confirmed to True respectively.',
      );
    });

    it('utter_clarification_options_rasa', () => {
      const text =
        'I can help, but I need more information. Which of these would you like to do: ' +
        '{{context.clarification_options}}?';
      expect(
        renderTemplate(text, {
          context: { clarification_options: 'transfer money or check balance' },
        }),
      ).toBe(
        'I can help, but I need more information. Which of these would you like to do: ' +
          'transfer money or check balance?',
      );
    });

    it('utter_flow_cancelled_rasa and utter_flow_continue_interrupted', () => {
      expect(
        renderTemplate('Okay, stopping {{ context.canceled_name }}.', {
          context: { canceled_name: 'transfer money' },
        }),
      ).toBe('Okay, stopping transfer money.');
      expect(
        renderTemplate("Let's continue with {{ context.previous_flow_name }}.", {
          context: { previous_flow_name: 'transfer money' },
        }),
      ).toBe("Let's continue with transfer money.");
    });

    it('a response mentioning context.info.max_characters', () => {
      expect(
        renderTemplate('Please keep it under {{ context.info.max_characters }} characters.', {
          context: { info: { max_characters: 420 } },
        }),
      ).toBe('Please keep it under 420 characters.');
    });

    it('slot rejections with {{value}}', () => {
      expect(renderTemplate('{{value}} is not a valid choice.', { value: 'purple' })).toBe(
        'purple is not a valid choice.',
      );
      expect(renderTemplate('{{value}} is not a number.', { value: null })).toBe(
        'None is not a number.',
      );
    });
  });

  describe('printing like Python str()', () => {
    it.each([
      [null, 'None'],
      [true, 'True'],
      [false, 'False'],
      [3, '3'],
      [2.5, '2.5'],
      ['s', 's'],
      [['a', 1, null], "['a', 1, None]"],
      [{ k: 'v', n: [true] }, "{'k': 'v', 'n': [True]}"],
      [["it's"], '["it\'s"]'],
    ])('%j prints as %s', (value, expected) => {
      expect(renderTemplate('{{ v }}', { v: value })).toBe(expected);
    });
  });

  describe('lookups', () => {
    const vars = { context: { x: 'X', 'a-b': 1, list: [10, 20, 30], nested: { y: 'Y' } } };

    it('dotted and subscript access', () => {
      expect(renderTemplate('{{context.x}}', vars)).toBe('X');
      expect(renderTemplate("{{ context['x'] }}", vars)).toBe('X');
      expect(renderTemplate("{{ context['a-b'] }}", vars)).toBe('1');
      expect(renderTemplate('{{ context.nested.y }}', vars)).toBe('Y');
      expect(renderTemplate('{{ context.list[1] }}/{{ context.list[-1] }}', vars)).toBe('20/30');
      expect(renderTemplate('{{ context.list.0 }}', vars)).toBe('10');
    });

    it('unknown names and fields are Undefined: empty, falsy, iterable as nothing', () => {
      expect(renderTemplate('[{{ nope }}]', vars)).toBe('[]');
      expect(renderTemplate('[{{ context.nope }}]', vars)).toBe('[]');
      expect(renderTemplate('[{{ context.nope.deeper }}]', vars)).toBe('[]');
      expect(renderTemplate('{% if nope %}y{% else %}n{% endif %}', vars)).toBe('n');
      expect(renderTemplate('{% for x in nope %}{{x}}{% endfor %}.', vars)).toBe('.');
      expect(renderTemplate('{{ nope is defined }} {{ context.x is defined }}', vars)).toBe(
        'False True',
      );
    });

    it('items() and for with two targets', () => {
      expect(
        renderTemplate('{% for k, v in d.items() %}{{k}}={{v}};{% endfor %}', {
          d: { a: 1, b: 'two' },
        }),
      ).toBe('a=1;b=two;');
    });
  });

  describe('filters', () => {
    it('join, lower, upper, length, default', () => {
      expect(renderTemplate("{{ xs|join(', ') }}", { xs: ['a', 1, true] })).toBe('a, 1, True');
      expect(renderTemplate('{{ xs|join }}', { xs: ['a', 'b'] })).toBe('ab');
      expect(renderTemplate('{{ s|lower }} {{ s|upper }}', { s: 'MiX' })).toBe('mix MIX');
      expect(
        renderTemplate('{{ xs|length }} {{ s|length }} {{ nope|length }}', {
          xs: [1, 2],
          s: 'abc',
        }),
      ).toBe('2 3 0');
      expect(renderTemplate("{{ nope|default('dflt') }}", {})).toBe('dflt');
      expect(renderTemplate("{{ s|default('dflt') }}", { s: '' })).toBe('');
      expect(renderTemplate("{{ s|default('dflt', true) }}", { s: '' })).toBe('dflt');
      expect(renderTemplate("{{ s|d('x') }}", { s: null })).toBe('None');
    });

    it('chains filters', () => {
      expect(renderTemplate("{{ xs|join(' ')|upper }}", { xs: ['a', 'b'] })).toBe('A B');
    });

    it('an unknown filter is a template error', () => {
      expect(() => renderTemplate('{{ x|frobnicate }}', {})).toThrow(TemplateError);
      expect(() => renderTemplate('{{ x|frobnicate }}', {})).toThrow(/Unknown filter 'frobnicate'/);
    });
  });

  describe('statements', () => {
    it('if / elif / else', () => {
      const t = '{% if n > 2 %}big{% elif n > 0 %}small{% else %}none{% endif %}';
      expect(renderTemplate(t, { n: 3 })).toBe('big');
      expect(renderTemplate(t, { n: 1 })).toBe('small');
      expect(renderTemplate(t, { n: 0 })).toBe('none');
    });

    it('for with loop variables and an else', () => {
      const t =
        '{% for x in xs %}{{ loop.index }}:{{ x }}{% if not loop.last %}, {% endif %}{% else %}empty{% endfor %}';
      expect(renderTemplate(t, { xs: ['a', 'b'] })).toBe('1:a, 2:b');
      expect(renderTemplate(t, { xs: [] })).toBe('empty');
    });

    it('for with a filter condition', () => {
      expect(renderTemplate('{% for x in xs if x > 1 %}{{x}}{% endfor %}', { xs: [1, 2, 3] })).toBe(
        '23',
      );
    });

    it('set', () => {
      expect(renderTemplate('{% set y = x ~ "!" %}{{ y }}', { x: 'hi' })).toBe('hi!');
    });

    it('comments and whitespace control', () => {
      expect(renderTemplate('a {# note #}b', {})).toBe('a b');
      expect(renderTemplate('a   {{- x -}}   b', { x: 1 })).toBe('a1b');
      expect(renderTemplate('x\n  {%- if true %} y{% endif %}', {})).toBe('x y');
    });

    it('drops one trailing newline, like jinja2', () => {
      expect(renderTemplate('{{ x }}\n', { x: 1 })).toBe('1');
      expect(renderTemplate('plain\n', {})).toBe('plain');
    });
  });

  describe('expressions', () => {
    it('comparisons, None, membership, logic', () => {
      expect(renderTemplate('{{ current_flow != None }}', { current_flow: null })).toBe('False');
      expect(renderTemplate('{{ current_flow != None }}', { current_flow: 'f' })).toBe('True');
      expect(renderTemplate("{{ 'a' in xs }} {{ 'z' not in xs }}", { xs: ['a'] })).toBe(
        'True True',
      );
      expect(renderTemplate('{{ a and b }} {{ a or b }} {{ not a }}', { a: 0, b: 2 })).toBe(
        '0 2 True',
      );
      expect(renderTemplate('{{ x is none }} {{ x is not none }}', { x: null })).toBe('True False');
      expect(renderTemplate('{{ 1 < 2 < 3 }}', {})).toBe('True');
    });

    it('arithmetic, concatenation, literals and conditionals', () => {
      expect(renderTemplate('{{ 1 + 2 * 3 }} {{ 7 // 2 }} {{ -n }}', { n: 4 })).toBe('7 3 -4');
      expect(renderTemplate('{{ "a" ~ 1 ~ none }}', {})).toBe('a1None');
      expect(renderTemplate("{{ ['x', 'y']|join('-') }} {{ {'k': 1}.k }}", {})).toBe('x-y 1');
      expect(renderTemplate("{{ 'yes' if ok else 'no' }}", { ok: false })).toBe('no');
      expect(renderTemplate("{{ d.get('a', 'none') }}", { d: {} })).toBe('none');
    });

    it('ordering incompatible values is an error', () => {
      expect(() => renderTemplate("{{ 1 < 'a' }}", {})).toThrow(TemplateError);
    });
  });

  describe('malformed templates', () => {
    it.each([
      ['{{ x ', /Unclosed '\{\{'/],
      ['{% if x %}a', /Missing '\{% endif %\}'/],
      ['{% for x in xs %}a', /Missing '\{% endfor %\}'/],
      ['{% endif %}', /Unexpected '\{% endif %\}'/],
      ['{% if x %}{% endfor %}', /Missing|Unexpected/],
      ['{% frob %}', /Unknown tag 'frob'/],
      ['{{ }}', /Empty expression/],
      ['{{ x y }}', /Unexpected 'y'/],
      ['{{ (x }}', /Expected '\)'/],
      ["{{ 'open }}", /Unclosed/],
      ['{% for in xs %}{% endfor %}', /Malformed/],
      ['{{ x.frob() }}', /Unknown method/],
    ])('%j', (template, message) => {
      expect(() => renderTemplate(template, { x: 1, xs: [] })).toThrow(message);
    });
  });

  it('renders the same template again from the cache with other variables', () => {
    expect(renderTemplate('{{ a }}', { a: 1 })).toBe('1');
    expect(renderTemplate('{{ a }}', { a: 2 })).toBe('2');
  });
});

describe('the other filters and tests', () => {
  it.each([
    ['{{ xs|first }}-{{ xs|last }}', 'a-c'],
    ["{{ 'hello world'|title }} {{ 'hELLO'|capitalize }}", 'Hello World Hello'],
    ["[{{ '  x  '|trim }}]", '[x]'],
    ["{{ 'a-b'|replace('-', '+') }}", 'a+b'],
    ['{{ [3, 1, 2]|sort|join }} {{ [3, 1, 2]|sort(true)|join }}', '123 321'],
    ['{{ [1, 1, 2]|unique|list }}', '[1, 2]'],
    ["{{ xs|reverse|join }} {{ 'ab'|reverse }}", 'cba ba'],
    ["{{ '42'|int + 1 }} {{ '2.5'|float }} {{ 'x'|int }}", '43 2.5 0'],
    ['{{ -3|abs }} {{ 2.567|round(2) }}', '3 2.57'],
    ["{{ {'a': [1, none]}|tojson }}", '{"a":[1,null]}'],
    ["{{ '<b>'|e }} {{ '<b>'|safe }} {{ 7|string ~ '!' }} {{ xs|count }}", '&lt;b&gt; <b> 7! 3'],
    [
      "{{ 's'|lower is lower }} {{ 'S' is upper }} {{ 3 is odd }} {{ 4 is even }}",
      'True True True True',
    ],
    [
      "{{ 6 is divisibleby 3 }} {{ 1 is eq 1 }} {{ 1 is ne 2 }} {{ 'a' is in xs }}",
      'True True True True',
    ],
    [
      '{{ 1 is number }} {{ 1 is integer }} {{ 1.5 is float }} {{ "s" is string }}',
      'True True True True',
    ],
    [
      '{{ xs is sequence }} {{ d is mapping }} {{ true is boolean }} {{ true is true }} {{ false is false }}',
      'True True True True True',
    ],
    ['{{ nope is undefined }} {{ xs is iterable }}', 'True True'],
    [
      "{{ 'A b'.lower() }} {{ 'a'.upper() }} {{ ' x '.strip() }} {{ 'a,b'.split(',') }}",
      "a b A x ['a', 'b']",
    ],
    [
      "{{ 'ab'.startswith('a') }} {{ 'ab'.endswith('a') }} {{ 'a b'.title() }} {{ 'ab'.capitalize() }}",
      'True False A B Ab',
    ],
    ["{{ 'x-y'.replace('-', '') }} {{ d.items()|list }}", "xy [['k', 1]]"],
    ['{{ 7 % 3 }} {{ 7 / 2 }} {{ 2 - 5 }} {{ "ab" * 2 }} {{ [1] + [2] }}', '1 3.5 -3 abab [1, 2]'],
  ])('%s', (template, expected) => {
    expect(renderTemplate(template, { xs: ['a', 'b', 'c'], d: { k: 1 } })).toBe(expected);
  });

  it('runtime errors are template errors', () => {
    expect(() => renderTemplate('{{ 1 / 0 }}', {})).toThrow(/Division by zero/);
    expect(() => renderTemplate('{{ 1 - "a" }}', {})).toThrow(/Unsupported operand/);
    expect(() => renderTemplate('{{ 3|length }}', {})).toThrow(/has no length/);
    expect(() => renderTemplate('{% for x in 3 %}{% endfor %}', {})).toThrow(/not iterable/);
    expect(() => renderTemplate('{{ nope.keys() }}', {})).toThrow(/undefined value/);
    expect(() => renderTemplate('{{ x is frob }}', {})).toThrow(/Unknown test/);
    expect(() => renderTemplate('{% for a, b in xs %}{% endfor %}', { xs: [[1]] })).toThrow(
      /Cannot unpack/,
    );
  });
});

describe('isTemplate', () => {
  it('spots Jinja markup', () => {
    expect(isTemplate('action_{{context.x}}')).toBe(true);
    expect(isTemplate('{% if x %}{% endif %}')).toBe(true);
    expect(isTemplate('plain {text}')).toBe(false);
  });
});
