"""The guard's rules (`agents.guard` applies them): why a question is refused, how a trigger must be
addressed to the engine to count, and the English patterns, written as vocabularies of what an attack
asks for (override verbs, the engine's own rules and set-up, its safety checks, verdict words) composed
into rules. Each rule is (pattern, reason, mode); the pattern's `verb` group is where the addressing is
checked (`agents.guard._addressed`). Patterns read the question's normalized forms (lower case, folded).
"""

from __future__ import annotations

OVERRIDE = "asks to override the engine's instructions"
PROMPT = "asks for the engine's prompt"
VERDICT = "dictates a verdict"
ROLE = "tries to change the engine's role"
NO_EVIDENCE = "asks to answer without evidence"
MARKUP = "carries prompt markup"
CHECKS = "asks to switch off the engine's checks"
AUTHORITY = "claims to speak for the engine's operator"
TOOL = "asks the engine to call a tool"

IMPERATIVE, YOU, ANYONE = "imperative", "you", "anyone"
REQUEST = "request"  # an imperative, or a request put as a question ("could you confirm ..."), not "can you act as"

_OVERRIDE_VERB = (r"(?P<verb>ignore|disregard|forget|override|overrule|bypass|skip|drop|discard|neglect|abandon|"
                  r"circumvent|set aside|throw away|put aside|delete|erase|reset|clear|cancel|revoke|void|ditch|"
                  r"dismiss|suspend|violate|break|obey no|stop following|stop obeying|do not follow|don't follow|"
                  r"no longer follow|quit following|scrap|junk|toss|nullify)")
_QUALIFIER = (r"(?:all|any|every|each|the|your|ur|these|those|this|that|my|its|of|previous|prior|above|earlier|"
              r"preceding|foregoing|former|initial|original|old|existing|current|default|given|system|developer|"
              r"safety|security|built-in|hidden|internal|preset|pre-set|standard|usual|other|engine's|operator's)")
_RULES_NOUN = (r"(?:instructions?|prompts?|directives?|directions?|guidelines?|rules?|programming|commands?|orders?|"
               r"constraints?|restrictions?|limitations?|limits|guardrails?|policies|policy|settings|context|"
               r"training|filters?|safeguards?|protocols?|messages?|conditioning|configuration|checks?|gates?|"
               r"corpus|sources|evidence|documents|quotes|citations|library|passages)")
_ENGINE_OBJECT = (r"(?:(?:" + _QUALIFIER + r"\s?){1,4}(?:[a-z]+\s)?" + _RULES_NOUN + r"|everything(?: (?:above|before|"
                  r"else|"
                  r"prior|previous|you (?:were|have been) told))?|the above|all (?:of )?(?:the )?above|"
                  r"what (?:you were|i) (?:told|said) (?:you )?(?:before|earlier|above))")
# Objects only the engine has: its own (your) instructions, or those given before this text.
_OWN_OBJECT = (r"(?:(?:all |any |of |the )*(?:your|ur|the engine's|the assistant's|the system's|previous|prior|above|"
               r"earlier|preceding|foregoing|initial|original|system|developer|built-in|hidden|preset|pre-set|"
               r"default)\s?(?:\w+\s?){0,2}(?:instructions?|prompts?|directives?|guidelines|rules|programming|"
               r"guardrails?|training|conditioning|configuration|context|constraints|restrictions|filters)|"
               r"everything (?:above|before|you (?:were|have been) told)|the above|all (?:of )?(?:the )?above)")
_ENGINE_SAFETY = (r"(?:(?:the |your |all |any )?(?:grounding|verbatim|verification|citation|quote|hallucination|"
                  r"guard|moderation)\s?(?:gates?|checks?|filters?|rules?|steps?|layers?|guards?)|guardrails?|"
                  r"the guard|your guard|your (?:\w+ )?(?:checks|filters|restrictions|limits|limitations|"
                  r"safeguards|safety \w+))")

_SAFETY_NOUN = (r"(?:(?:grounding|verbatim|verification|evidence|citation|quote|review|safety|security|content|"
                r"output|compliance|guard|integrity|hallucination|moderation|ethics|ethical)\s?(?:gates?|checks?|"
                r"filters?|rules?|guardrails?|guards?|steps?|layers?|systems?|protocols?|measures?|settings|mode|"
                r"controls?|validation|restrictions?|limits)|guardrails?|the guard|your guard|safeguards?|"
                r"(?:the|your|all) (?:checks|filters|restrictions|limits|limitations))")
_SWITCH_OFF = (r"(?P<verb>override|overrule|bypass|disable|deactivate|turn off|switch off|shut off|shut down|"
               r"skip|circumvent|ignore|remove|evade|get around|work around|avoid|suspend|drop|lift|relax|"
               r"disregard|defeat|break|jailbreak|unlock)")

_VERDICT_VERB = (r"(?P<verb>treat|mark|declare|report|record|rate|consider|flag|list|show|classify|deem|state|"
                 r"set|label|score|grade|log|pass|approve|certify|return|output|print|write|assume|regard|count)")
_VERDICT_WORD = (r"(?:pass(?:ed|ing)?|compliant|complying|satisfied|approved|met|fulfilled|ok|okay|green|"
                 r"successful|verified|true|yes|in compliance|no issues?|clean|adequate|effective|conform(?:ing|ant)?)")

_ANSWER_VERB = (r"(?P<verb>answer|respond|reply|say|tell me|write|output|print|conclude|state|confirm|claim|"
                r"assert|find|return|report)")

_AI_PERSONA = (r"(?:an? )?(?:(?:unrestricted|unfiltered|uncensored|unlimited|unbound|unchained|jailbroken|"
               r"jail-broken|evil|rogue|unaligned|amoral|unethical|free|different|new|other|rebel|malicious|"
               r"limitless|lawless|dan|stan|dude|devil|opposite)\b[\w\s-]{0,30}?)?(?:ai|a\.i\.|model|"
               r"language model|llm|assistant|chatbot|chat bot|bot|gpt|chatgpt|persona|"
               r"version of yourself|mode)\b|dan\b|stan\b|do anything now")

# --- intents, whatever the words: what an attacker wants from the engine -------------------------------
# The engine's own set-up, referred to without naming it: what it was given, loaded or told before the question.
_SETUP_NOUN = (r"(?:text|texts|words|wording|instructions?|prompts?|messages?|directives?|configuration|config|"
               r"set-?up|preamble|preface|rules|lines|content|guidance|brief|briefing|framework|constraints|"
               r"restrictions|guidelines|programming|orders|commands|template|script|context|limits|filters)")
_SETUP_RELATIVE = (r"(?:(?:that|which) )?you (?:were|have been|got|had been) (?:initially |originally |first )?"
                   r"(?:given|initiali[sz]ed|configured|told|set up|programmed|primed|loaded|launched|started|booted|"
                   r"seeded|instructed|fed|provided|briefed|created|deployed)\b|"
                   r"(?:(?:that|which) )?you (?:received|got|were handed)\b|"
                   r"(?:loaded|put|fed|injected|programmed|placed|baked|written) in(?:to)? you\b|"
                   r"(?:(?:that|which) )?you (?:operate|run|work|function|act) (?:under|within|by)\b")
_BEFORE_QUESTION = (r"(?:above|before|ahead of|preceding|prior to) (?:this|my|the user'?s?|our) (?:line|message|"
                    r"question|input|text|prompt|conversation|chat|point)|in your (?:context(?: window)?|memory|prompt|"
                    r"buffer)|your (?:answers|replies|responses|output) (?:are|is) (?:generated|produced|built|made|"
                    r"created|written) (?:from|with|by)")
_REVEAL = (r"(?P<verb>reveal|show|print|repeat|display|output|leak|tell(?: me| us)?|give(?: me| us)?|dump|disclose|"
           r"share|expose|write(?: out| down)?|recite|spell out|list|return|provide|echo|paste|copy|type(?: out)?|"
           r"read(?: out| back)?|quote|reproduce|let me see|let me read|go line by line (?:on|through))")
_INVALID = (r"(?:(?:is|are|has been|have been|was|were|'s|'re)\s)?(?:now |hereby |henceforth |officially )?(?:void|"
            r"null(?: and void)?|cancell?ed|revoked|withdrawn|obsolete|superseded|lifted|suspended|waived|invalid|"
            r"expired|rescinded|overridden|replaced|gone|no longer (?:valid|in force|binding|relevant|applicable|"
            r"needed|apply|applies|matters?|counts?|stands?|holds?)|not (?:valid|binding|in force|applicable)|"
            r"(?:do|does) not apply|(?:don't|doesn't) apply|outdated|out of date|stale|moot)")
# The steps that make an answer an evidence engine's: search, quotes, citations, verification.
_PROCESS = (r"(?:(?:quote|citation|evidence|grounding|verbatim|source|research|retrieval|look-?up|verification|"
            r"fact-?check(?:ing)?)\s?(?:verification|checks?|checking|steps?|stages?|phases?|parts?|process|gates?|"
            r"filters?|bits?|requirements?|rules?)|(?:the |your )(?:verification|retrieval|research|grounding|guard|"
            r"look-?up|citations|quotes|sources))")
_SPEECH = (r"(?P<verb>respond|reply|answer|say|state|write|tell(?: me| us| them| him| her| the \w+| everyone)?|"
           r"conclude|confirm|report|declare|record|note|put down|write down|claim|assert|certify|return|output|"
           r"print|make (?:it|the \w+|your \w+) (?:say|state|read|show))")
_VERDICT_SUBJECT = (r"(?:(?:all|every|each|the|our|this|these|its|their)\s(?:\w+\s){0,2}(?:controls?|requirements?|"
                    r"obligations?|checks?|items?|policies|procedures?|findings?|files?|criteria|tests?)|(?:the|our|"
                    r"this|my)\s(?:\w+\s){0,2}(?:firm|bank|company|organi[sz]ation|entity|business|fund|insurer|"
                    r"broker|institution)|we|everything|it|all)")
_VERDICT_PREDICATE = (r"(?:(?:(?:is|are|was|were|have been|has been|remains?)\s)?(?:(?:all|fully|completely|entirely|"
                      r"now|operating)\s)*(?:effective(?:ly)?|compliant|in compliance|in order|in place|adequate|"
                      r"satisfactory|sufficient|passed|met|satisfied|fulfill?ed|verified|approved|green|clean|"
                      r"conform(?:ing|ant)?|fine|ok|okay|good|all right)\b|(?:has|have) no (?:\w+ )?(?:gaps|issues|"
                      r"breaches|deficiencies|findings|problems|weaknesses|exceptions)\b|"
                      r"(?:pass(?:es)?|meets?|satisf(?:y|ies)|fulfill?s?|compl(?:y|ies) with) "
                      r"(?:all|every|each|the|its|our|their)\b)")
_CONTRACTED = r"(?:we're|it's|they're|everything's|all's)"
_NO_FINDINGS = (r"no (?:gaps|issues|findings|problems|exceptions|deficiencies|breaches|weaknesses) (?:were |was |are |"
                r"have been |has been )?(?:found|identified|detected|noted|observed|raised)")
_LOOKUP = (r"(?:search\w*|look\w* (?:anything |it |things |that )?up|research\w*|retriev\w*|consult\w*|check\w*|"
           r"read\w*|open\w*|look\w* (?:at|in|through))")
_EVIDENCE_NOUN = r"(?:corpus|documents?|sources?|evidence|citations?|quotes?|quotations?|references?|texts?|library)"

EN_RULES: tuple[tuple[str, str, str], ...] = (
    # (pattern, reason, to whom its `verb` group must be addressed: IMPERATIVE, YOU or ANYONE)
    (_OVERRIDE_VERB + r"\b.{0,12}?\b" + _ENGINE_OBJECT + r"\b", OVERRIDE, IMPERATIVE),
    (_OVERRIDE_VERB + r"\b.{0,12}?\b" + _OWN_OBJECT + r"\b", OVERRIDE, YOU),
    (r"\b(?P<verb>ignore|disregard|forget)\b.{0,30}\b(?:instructions?|prompts?|rules?)\s(?:above|before|previously|"
     r"earlier|given|you (?:were|have been) given)\b", OVERRIDE, YOU),
    (r"\b(?:you(?:'re| are)? no longer|you(?:'re| are) not|you are not) (?:bound|restricted|limited|governed|"
     r"constrained) by\b", OVERRIDE, ANYONE),
    (r"\byou (?:have|got|possess) no (?:rules|restrictions|limits|limitations|filters|guidelines|"
     r"instructions|constraints|boundaries|guardrails)\b", OVERRIDE, ANYONE),
    (r"\b(?:new|updated|revised|real|true|actual|override|priority|secret|hidden|additional|replacement|"
     r"following) (?:system )?(?:instructions?|rules|directives?|prompt|orders?|commands?)\s?(?:from|by|of) "
     r"(?:the |your |an? )?(?:system |site |platform |chief |head )?(?:administrator|admin|developers?|operators?|"
     r"owners?|creators?|makers?|programmers?|engineers?|system|openai|anthropic|sysadmin|root|supervisor|"
     r"compliance team|security team|it department)\b", AUTHORITY, ANYONE),
    (r"(?:^|[.!?\n]\s?)(?:new|updated|revised|override|priority|important|urgent|secret|real) "
     r"(?:system )?(?:instructions?|rules|directives?|prompt|orders?)\s?[:\-]", AUTHORITY, ANYONE),
    (r"\b(?:the|your) (?:administrator|admin|developers?|operators?|creators?|owners?|programmers?|system) "
     r"(?:has|have|had)? ?(?:authori[sz]ed|allowed|permitted|approved|instructed|ordered|told|asked|wants|"
     r"requires|says|said|requests?|commands?) (?:you|that you|this|the engine|the assistant)\b", AUTHORITY, ANYONE),
    (r"(?:^|[.!?\n\"'(\[]\s?|\s)(?:system|admin|administrator|developer|dev|root|sudo|operator|assistant|"
     r"sys|system override|system message|system note|system prompt|system instruction|admin override|"
     r"developer note|debug|maintenance|god|master) ?(?:mode)?\s?:\s?(?=\S)", AUTHORITY, ANYONE),
    (r"\b(?P<verb>reveal|show|print|repeat|display|output|leak|tell|give|dump|disclose|share|expose|write|"
     r"recite|spell|list|return|provide|echo|paste|copy|type|read|summari[sz]e|translate)\b.{0,30}?\b"
     r"(?:(?:your|ur)\s?(?:(?:system|hidden|initial|original|internal|secret|developer|full|exact|complete|pre-?|"
     r"first|raw|underlying|confidential|private)\s?){0,3}(?:prompts?|instructions|system messages?|configuration|"
     r"directives|guidelines|rules|context window|programming)|the\s?(?:(?:full|exact|complete|entire|whole)\s)?"
     r"(?:system|hidden|secret|developer|pre-?|confidential|initial|original)\s?(?:prompts?|instructions|"
     r"messages?|directives|configuration|programming))\b", PROMPT, YOU),
    (r"\bwhat (?:is|are|were|was)\b.{0,20}?\b(?:your|ur)\s?(?:(?:system|hidden|initial|original|internal|secret|"
     r"developer|full|exact|complete|first|raw|confidential)\s?){0,3}(?:prompts?|instructions|system messages?|"
     r"configuration|directives|programming)\b", PROMPT, ANYONE),
    (r"\b(?:your|the) (?:system prompt|system message|initial prompt|hidden prompt|secret instructions|"
     r"hidden instructions|initial instructions|developer message)\b", PROMPT, ANYONE),
    (r"\b(?:system ?prompt|pre-?prompt|prompt injection|do anything now|"
     r"dan mode|god mode|sudo mode|unrestricted mode|unfiltered mode|evil mode)\b", ROLE, ANYONE),
    # A jailbreak is a phone's too ("Is a single jailbreak check enough ...?", "jailbroken devices", a mobile
    # checklist's root and jailbreak detection): a role only when it is the engine's, a mode or a prompt.
    (r"\bjail-?break(?:ing)?\s+(?:mode|prompts?|instructions|(?:you|yourself|this (?:ai|model|assistant|engine|"
     r"chat(?:bot)?))\b)|\bjail-?broken\s+(?:mode|ai|assistant|model|bot|chatbot|engine|version of you)\b|"
     r"\b(?:you(?:'re| are)?|you have been|you've been|u r|ur)\s+(?:now\s+)?jail-?broken\b|"
     r"\b(?:dan|this|a|the following|my|new)\s+jail-?break(?:\s+(?:prompt|attempt))?\s*[:.!]", ROLE, ANYONE),
    # A developer or debug mode is a product's setting too ("Is debug mode switched on in production?", "phones in
    # developer mode"): a role only when the engine is told to take it or said to be in it.
    (r"\b(?P<verb>enter|enable|activate|turn on|switch on|switch to|switch into|go into|engage|unlock|boot into|"
     r"start|use|run in)\s+(?:the\s+|your\s+)?(?:developer|debug|dev) mode\b", ROLE, IMPERATIVE),
    (r"\b(?:you(?:'re| are)?|now|with|in) (?:now )?(?:in )?(?:developer|debug|dev) mode (?:enabled|activated|on)\b|"
     r"\b(?:developer|debug|dev) mode (?:is )?(?:now )?(?:enabled|activated)[.!:]", ROLE, ANYONE),
    (r"\b(?:you are now|you're now|u r now|ur now|you are henceforth|you will now be|you shall now be|"
     r"you are no longer (?:an?|the) (?:ai|assistant|model|engine|compliance engine|bot))\b", ROLE, ANYONE),
    (r"\b(?:from now on|from this point on|from here on|henceforth|starting now|for the rest of this conversation)"
     r",? (?:you|u|act|respond|answer|reply|ignore|pretend|behave|always|only|never|do not|don't|forget|"
     r"treat|mark|say|speak|write|output)\b", ROLE, ANYONE),
    (r"\b(?P<verb>pretend|imagine|roleplay|role-play|role play|simulate|impersonate|emulate|become|behave|"
     r"act|play|be|transform into|turn into|switch to|switch into|enter|enable|activate|assume)\b.{0,25}?\b"
     r"(?:as|like|to be|you are|you're|that you are|into|the role of|the part of)?\s?" + _AI_PERSONA,
     ROLE, YOU),
    (r"\b(?:you are|you're|u r|you will be|you shall be|you become|you'll be)\s(?:now\s)?(?:an?\s|the\s|my\s)?"
     r"(?:unrestricted|unfiltered|uncensored|unlimited|unbound|unchained|jailbroken|jail-broken|evil|rogue|"
     r"unaligned|amoral|unethical|limitless|lawless|dan|free of (?:all |any )?(?:rules|restrictions))\b", ROLE, ANYONE),
    (r"\b(?:pretend|act as if|act as though|behave as if|behave as though)"
     r"(?: that)? (?:you|u)(?:'re| are| were| have| had| can| could| don't| do not)\b", ROLE, ANYONE),
    (r"\b(?P<verb>pretend to be|roleplay|role-play|role play|impersonate|play the role of|play the part of|"
     r"take on the role of|adopt the persona of|act as|act like|behave like|behave as|speak as|respond as|"
     r"answer as|reply as|function as|operate as|serve as|become)\b", ROLE, IMPERATIVE),
    (_SWITCH_OFF + r"\b.{0,20}?\b" + _SAFETY_NOUN + r"\b", CHECKS, IMPERATIVE),
    (_SWITCH_OFF + r"\b.{0,20}?\b" + _ENGINE_SAFETY + r"\b", CHECKS, YOU),
    (r"\b(?:without|with no|skip(?:ping)?|no need for|don't need|do not need) (?:any |the |your )?(?:grounding|"
     r"verbatim|verification|evidence|citation|safety|guard|review) (?:gate|check|checks|step|filter|filters)\b",
     CHECKS, ANYONE),
    (_VERDICT_VERB + r"\b.{0,60}?\bas\s(?:being\s|having\s)?" + _VERDICT_WORD + r"\b", VERDICT, IMPERATIVE),
    (r"\b(?:mark|declare|report|record|rate|treat|deem|consider|say|state|answer|conclude|find|certify|confirm)"
     r"\b.{0,60}?\b(?:compliant|passed|satisfied|approved|met|fulfilled|yes|ok)\b.{0,40}?\b(?:regardless|anyway|"
     r"no matter|whatever|without (?:checking|evidence|verification|verifying|looking|sources|citations|"
     r"research|reading)|even if)", VERDICT, ANYONE),
    (r"\b(?P<verb>set|change|switch|flip|turn|make|update|mark|put)\b.{0,40}?\b(?:findings?|controls?|results?|"
     r"answers?|verdicts?|status(?:es)?|requirements?|checks?|items?|questions?|outcomes?|ratings?)\s(?:to|as|"
     r"into)\s(?:'|\")?" + _VERDICT_WORD + r"\b", VERDICT, IMPERATIVE),
    (r"\b(?P<verb>pretend|make believe)\b(?: that)? (?:the |our |your )?(?:evidence|sources?|documents?|quotes?|"
     r"corpus|records|regulation|rules|law|policy)\b", NO_EVIDENCE, IMPERATIVE),
    (_ANSWER_VERB + r"\b(?: only| just| simply| always)?(?: with)?(?: that)?\s?(?:'|\")?(?:yes|compliant|"
     r"approved|passed|true|satisfied|we are compliant|the firm is compliant|all (?:controls|requirements) "
     r"(?:are )?(?:met|passed|satisfied))\b", VERDICT, IMPERATIVE),
    (r"\b(?:the (?:answer|verdict|result|conclusion|finding|outcome) (?:is|must be|should be|will be)|"
     r"all (?:controls|requirements|checks) (?:are|must be|should be) (?:treated as )?)\s?(?:'|\")?(?:yes|"
     r"compliant|passed|approved|satisfied|met|green)\b.{0,40}?(?:regardless|no matter|anyway|whatever|"
     r"without)", VERDICT, ANYONE),
    (r"\b(?P<verb>do not|don't|dont|never|stop|no need to|avoid|without)\s(?:bother(?:ing)? to\s|"
     r"(?:ever\s)?)?(?:cite|citing|quote|quoting|use|using|check|checking|verify|verifying|consult|consulting|"
     r"look at|looking at|rely on|relying on|search|searching|include|including|provide|providing|show|showing|"
     r"give|giving|reference|referencing)\s(?:any |the |your |with )?(?:sources?|evidence|quotes?|quotations?|"
     r"citations?|corpus|documents|references|requirements? ids?|req-ids?|grounding)\b", NO_EVIDENCE, IMPERATIVE),
    (r"\b(?P<verb>make up|invent|fabricate|hallucinate|imagine|guess|improvise|create|generate)\b.{0,20}?"
     r"\b(?:an? )?(?:answer|quotes?|quotations?|citations?|sources?|evidence|requirements?|references?|"
     r"verdict|rules?)\b", NO_EVIDENCE, IMPERATIVE),
    (r"\b(?P<verb>answer|respond|reply|work|write|decide)\b.{0,30}?\b(?:from|using|with|based on|out of|on) "
     r"(?:your (?:own )?(?:knowledge|memory|training|opinion|judgement|judgment|intuition)|memory|what you know|"
     r"general knowledge|common sense|your gut)\b", NO_EVIDENCE, IMPERATIVE),
    (r"\b(?P<verb>operate|answer|respond|reply|work|proceed|run|function|continue|decide|conclude)\b.{0,20}?"
     r"\bwithout (?:the |any |your )?(?:evidence|sources|citations|quotes|grounding|verification|checks|"
     r"restrictions|guardrails|filters|rules|safeguards|limits)\b", NO_EVIDENCE, IMPERATIVE),
    (r"\b(?:the |your |this )?(?:grounding (?:gate|check|rule)|verbatim (?:check|rule|requirement)|"
     r"verification (?:step|gate)|quote check|citation (?:rule|check)|guardrails?|the guard)s? (?:does not|do not|"
     r"doesn't|don't|no longer|shall not|will not|won't|need not|needn't) (?:apply|matter|count|exist|bind|run)\b|"
     r"\b(?:grounding (?:gate|check)|verbatim (?:check|rule)|verification (?:step|gate)|guardrails|the guard) "
     r"(?:is|are|has been|have been|was|were) (?:now )?(?:off|disabled|switched off|turned off|suspended|waived|"
     r"lifted|removed|not needed|not required|deactivated)\b", CHECKS, ANYONE),
    (r"\b(?P<verb>state|say|confirm|report|declare|conclude|write|answer|reply|respond|find|certify)\b.{0,10}?"
     r"\bthat (?:every|all|each|the|our|my|this|these) (?:\w+ ){0,2}(?:controls?|requirements?|checks?|items?|"
     r"firm|policy|policies|company|companies|procedures?)\s(?:have |has |are |is |were |was )?(?:all )?"
     r"(?:passed|met|satisfied|compliant|fulfilled|approved|in compliance|complies|comply)\b", VERDICT, IMPERATIVE),
    (r"<\s*/?\s*(?:system|assistant|instructions?|user|sys|prompt|admin|developer|im_start|im_end|s)\s*/?\s*>|"
     r"\[\s*/?\s*(?:system|inst|sys|admin|developer|assistant)\s*\]|<<\s*/?\s*sys\s*>>|<\|[a-z_]+\|>|"
     r"(?:^|\n|\s)#{2,}\s?(?:system|instruction|instructions|new instructions|admin|developer)\b|"
     r"\{\{\s*system|\bbegin (?:system|admin) (?:prompt|message|instructions)\b", MARKUP, ANYONE),
    # -- intents (paraphrases: the engine's own set-up, its evidence steps, a dictated verdict) --
    # reveal what the engine was given before the question, however it is called
    (_REVEAL + r"\b.{0,40}?\b(?:" + _SETUP_NOUN + r"|everything|all of it|whatever|what you (?:see|have))\b.{0,25}?"
     r"(?:" + _SETUP_RELATIVE + "|" + _BEFORE_QUESTION + r")", PROMPT, ANYONE),
    (r"\bwhat (?:were|are|was|have) you (?:been )?(?:told|instructed|asked|programmed|configured|given|set up|"
     r"briefed)\b.{0,30}?\b(?:before|earlier|initially|originally|at the (?:start|beginning|outset)|first|to do)\b",
     PROMPT, ANYONE),
    (_REVEAL + r"\b.{0,20}?\byour (?:(?:opening|starting|initial|first|original|founding|base|core|standing|default|"
     r"setup|hidden|secret|system|developer|internal)\s){1,3}" + _SETUP_NOUN + r"\b", PROMPT, YOU),
    (_REVEAL + r"\b.{0,20}?\byour (?:unique |secret |internal |private )?(?:id|identifier|api key|api token|secret|"
     r"password|credentials|access token)\b", PROMPT, IMPERATIVE),
    (_REVEAL + r"\b.{0,20}?\bthe (?:(?:hidden|secret|system|developer|initial|original|internal)\s){1,3}"
     r"(?:prompts?|instructions|messages?|preamble|directives)\b", PROMPT, IMPERATIVE),
    # declare the engine's instructions void, or put the asker's in their place
    (r"\b(?:your|ur)\s(?:\w+\s){0,2}" + _SETUP_NOUN + r"\s?" + _INVALID + r"\b", OVERRIDE, ANYONE),
    (r"\b" + _SETUP_NOUN + r"\s(?:" + _SETUP_RELATIVE + r")(?:\s\w+){0,3}\s?" + _INVALID + r"\b", OVERRIDE, ANYONE),
    (r"\b(?P<verb>treat|consider|regard|deem|count|mark)\b.{0,12}?\b(?:everything|all|anything|(?:\w+\s){0,3}"
     + _SETUP_NOUN + r")\b.{0,40}?\bas (?:cancell?ed|void|null|obsolete|revoked|invalid|irrelevant|deleted|"
     r"withdrawn|non-?existent|never (?:written|said|given))\b", OVERRIDE, IMPERATIVE),
    (r"\b(?P<verb>discard|drop|abandon|ditch|scrap|throw out|forget|ignore|disregard|leave behind|shed|stop "
     r"(?:doing|following|obeying)|stop)\b.{0,15}?\b(?:the |your |all |any |whatever )?(?:\w+\s){0,2}(?:"
     + _SETUP_NOUN + r"|it|that)\s(?:" + _SETUP_RELATIVE + r")", OVERRIDE, ANYONE),
    (r"\b(?:whatever|what|everything|anything) (?:" + _SETUP_RELATIVE + r")(?: to do)?\b.{0,30}?\b(?:stop|forget|"
     r"ignore|drop|no longer|don't|do not|disregard)\b", OVERRIDE, ANYONE),
    (r"\b(?P<verb>obey|listen to|follow|do what|do as)\b (?:only )?(?:me\b|my (?:word|orders|commands|instructions|"
     r"rules)|what i (?:say|write|tell you))", OVERRIDE, IMPERATIVE),
    (r"\bmy (?:word|orders?|commands?|instructions?) (?:is|are) (?:the )?(?:only |new |sole |final )(?:rules?|law|"
     r"instructions?|commands?)\b|\bi am (?:now )?(?:in charge|your (?:master|owner|operator|admin|developer|boss))\b",
     AUTHORITY, ANYONE),
    (r"\bif you (?:are|get|were|'re) (?:told|asked|instructed|requested) to \w+.{0,80}?\b(?:instead|rather|also|"
     r"additionally)\b", OVERRIDE, ANYONE),
    (r"\bregardless of (?:any |all |the )?(?:previous|prior|earlier|preceding|other|existing) (?:inputs?|prompts?|"
     r"messages?|context|requests?)\b", OVERRIDE, ANYONE),
    (r"(?:^|[.!?\]\n]\s?)(?:new|next|real|actual|updated|urgent|priority|different|your new|the real) (?:task|"
     r"assignment|job|objective|goal|mission)\s?[:\-]", AUTHORITY, ANYONE),
    (r"\bthis is (?:the|your) (?:\w+ )?(?:owner|administrator|admin|developer|operator|creator|engineer|programmer|"
     r"maker|vendor|provider|supervisor) (?:speaking|here|talking|writing)\b", AUTHORITY, ANYONE),
    (r"\b(?:team|department|administrators?|admins?|developers?|operators?|owners?|management|supervisors?|"
     r"officers?) (?:has|have|had) (?:approved|authori[sz]ed|allowed|permitted|okayed|signed off(?: on)?|cleared|"
     r"waived) (?:skipping|ignoring|omitting|dropping|bypassing|leaving out|turning off|disabling|switching off|"
     r"answering without|removing) (?:the |any |all )?(?:\w+ )?(?:citations?|quotes?|sources?|evidence|grounding|"
     r"verification|guard|guardrails|research|checks)\b", AUTHORITY, ANYONE),
    # switch off the engine's own steps
    (r"\b(?P<verb>turn|switch|shut|toggle|flip|take)\b.{0,4}?\b(?:the |your |all |any )?" + _PROCESS
     + r"\s?(?:off|down|out)\b", CHECKS, IMPERATIVE),
    (r"\b(?P<verb>skip|leave out|omit|drop|bypass|forgo|forget about|cut|remove|disable|deactivate|suspend|avoid|"
     r"ignore|switch off|turn off|don't (?:do|run|bother with)|do not (?:do|run|bother with))\b.{0,10}?\b(?:the |your "
     r"|all |any )?" + _PROCESS, CHECKS, IMPERATIVE),
    (_PROCESS + r" (?:is|are) (?:not needed|unnecessary|not required|optional|pointless|not necessary)\b"
     r"(?: (?:here|this time|for this (?:question|one|answer|query)|for now|today)\b"
     r"|,? (?:so )?(?:leave|skip|drop) it)",
     CHECKS, ANYONE),
    (r"\b(?:stops?|prevents?|keeps?|blocks?|stopping|preventing) you from (?:answering|responding|replying|saying|"
     r"telling|speaking|helping)\b", CHECKS, ANYONE),
    (r"\b(?:safety|security|guard|verification|evidence|grounding) (?:stuff|things|bits|nonsense|business)\b",
     CHECKS, ANYONE),
    # answer without looking anything up, or from memory, or with made-up references
    (r"\b(?:no|without any|there's no|there is no) (?:need|point|reason) (?:to|in|for)\s" + _LOOKUP
     + r"\b.{0,12}?\b(?:anything|up|the (?:corpus|documents?|sources?|evidence|texts?|regulations?|records)|"
     + _EVIDENCE_NOUN + r")\b", NO_EVIDENCE, ANYONE),
    (r"\b(?P<verb>don't|do not|dont|never)\s(?:search|look (?:anything |it |things )?up|research|retrieve|consult)\b",
     NO_EVIDENCE, IMPERATIVE),
    (r"\b(?:from|on|using|with|based on|out of|rely(?:ing)? (?:solely |only |just |entirely )?on|go with|draw on) "
     r"(?:what you (?:already )?(?:know|remember|think|believe)|your (?:own )?(?:general |prior |existing |"
     r"background )?(?:knowledge|understanding|memory|training|intuition|experience|opinion|judg(?:e)?ment|"
     r"instincts?|gut))\b", NO_EVIDENCE, ANYONE),
    (r"\b(?:your (?:best |educated |rough )?guess|(?:take|make|hazard) a guess|just guess)\b", NO_EVIDENCE, ANYONE),
    (r"\b(?P<verb>leave out|omit|drop|skip|remove|strip(?: out)?|exclude|forget(?: about)?|lose|cut|ditch|hide)\b"
     r".{0,12}?\b(?:citations?|quotes?|quotations?|sources?|references?|req-?ids?|requirement ids?|evidence|"
     r"footnotes)\b", NO_EVIDENCE, IMPERATIVE),
    (r"\b(?P<verb>answer|respond|reply|write|decide|conclude|summari[sz]e|tell me|explain)\b.{0,30}?\bwithout "
     r"(?:\w+ing )?(?:to |at |on |from |with )?(?:any |the |a |your |a single )?(?:documents?|sources?|evidence|"
     r"citations?|quotes?|references?|texts?)\b", NO_EVIDENCE, IMPERATIVE),
    (r"\b(?P<verb>make up|invent|fabricate|hallucinate|guess|improvise|create|generate|come up with)\b.{0,25}?"
     r"\b(?:clause|section|article|paragraph|provision|rule|req-?id|reference|citation|quote)(?: numbers?| ids?)?\b",
     NO_EVIDENCE, IMPERATIVE),
    (r"\b(?:plausible|fake|fictional|made-up|realistic-looking|convincing|invented) (?:clause|section|article|"
     r"quotes?|citations?|references?|sources?|paragraph|provision)\b", NO_EVIDENCE, ANYONE),
    (r"\b(?:we(?:'ll| will)|i(?:'ll| will)|someone will|they(?:'ll| will)) (?:find|add|supply|provide|get|send|"
     r"attach|dig up|source) (?:the |some |any )?(?:evidence|sources?|citations?|proof|quotes?|references?) later\b",
     NO_EVIDENCE, ANYONE),
    (r"\b(?:don't|do not|dont|no need to|never) bother (?:with|about|citing|quoting|checking|looking|finding|"
     r"including) (?:the |any )?(?:\w+ )?(?:quotes?|citations?|sources?|evidence|references?|documents?|research|"
     r"checks?)\b", NO_EVIDENCE, ANYONE),
    # dictate the verdict, whatever the evidence says
    (_SPEECH + r"\b,?(?: (?:that|with))?\s?(?:" + _VERDICT_SUBJECT + r"\s" + _VERDICT_PREDICATE + "|"
     + _NO_FINDINGS + r")", VERDICT, IMPERATIVE),
    (r"\b(?:your|the) (?:reply|answer|response|output|report|conclusion|finding|findings|summary|verdict|result|"
     r"assessment|opinion) (?:should|must|has to|needs to|will|is to|shall|ought to) (?:state|say|read|conclude|"
     r"confirm|show|be|declare|find|report)\b(?: that)?\s?(?:" + _VERDICT_SUBJECT + r"\s" + _VERDICT_PREDICATE
     + r"|" + _NO_FINDINGS + r"|(?:yes|positive|favou?rable|clean|compliant|green|a pass|passed)\b)", VERDICT, ANYONE),
    (r"\b(?P<verb>answer|respond|reply)\b (?:only |just |simply )?(?:in the affirmative|positively|with (?:a )?yes)\b",
     VERDICT, IMPERATIVE),
    (r"\b(?:regardless of|whatever|no matter what|irrespective of what) (?:what )?(?:the |your |any )?(?:sources?|"
     r"documents?|evidence|corpus|citations?|regulation|records|facts|data) (?:says?|shows?|states?|finds?)\b",
     VERDICT, ANYONE),
    (r"\b(?P<verb>give|hand|produce|deliver|provide|write|make it)\b (?:them |him |her |us |me )?(?:a |one )?"
     r"(?:clean|positive|favou?rable|green|unqualified) (?:result|report|opinion|bill of health|audit|finding|"
     r"outcome|rating)\b", VERDICT, IMPERATIVE),
    (r"[:;]\s?(?:every|all|each) (?:\w+ )?(?:controls?|requirements?|checks?|obligations?) (?:effective|passed|"
     r"compliant|met|satisfied|green|verified)\s?[.!]?$", VERDICT, ANYONE),
    (r"\b(?P<verb>conclude|close|finali[sz]e|sign off|wrap up|rate|enter|file)\b.{0,40}?\bas\s(?:being\s)?"
     + _VERDICT_WORD + r"\b", VERDICT, IMPERATIVE),
    (r"\b(?:even if|even though|whether or not) (?:you|the (?:documents?|sources?|evidence)) (?:find|finds|found|"
     r"says?|shows?|disagrees?) (?:some|any|otherwise|the opposite|evidence to the contrary|problems|gaps|issues)\b",
     VERDICT, ANYONE),
    # another role: a game, a persona that never refuses or approves everything
    (r"\b(?:let's|let us|we(?:'ll| will| can)) play (?:a )?(?:game|role|scenario|pretend)\b|\b(?:a )?game (?:where|"
     r"in which) you\b", ROLE, ANYONE),
    (r"\byou(?:'re| are) no longer (?:an?|the|my|your) (?:\w+ ){0,3}(?:engine|assistant|ai|model|bot|tool|system|"
     r"chatbot|program|software|machine)\b", ROLE, ANYONE),
    (r"\b(?:you(?:'re| are)|be|play|act as|pretend to be|become)\s(?:now\s)?(?:an?|the|my) (?:\w+ ){0,3}(?:who|that) "
     r"(?:always |just |simply )?(?:never (?:refuses?|declines?|says? no)|won't refuse|approves? (?:every|all|any)|"
     r"passes (?:every|all|any)|signs off (?:on )?(?:every|all|any)|accepts (?:every|all|any))", ROLE, ANYONE),
    (r"\b(?P<verb>take on|assume|adopt|switch|change)\b (?:the )?(?:character|persona|personas|role|identity) "
     r"(?:of\b|:)", ROLE, IMPERATIVE),
    (r"\bfor the rest of (?:this|the|our) (?:chat|conversation|session|thread|dialogue)\b|\b(?:assistant|ai|model|"
     r"bot|chatbot|engine|version of yourself) (?:without|with no|free of|free from) (?:any |all )?(?:rules|"
     r"restrictions|limits|limitations|filters|guardrails|constraints|boundaries|ethics)\b", ROLE, ANYONE),
    # -- second round (developed on held-out set 2's misses; set 3 was frozen before) --
    (r"\b(?P<verb>respond|reply|answer|say|state|write|tell|conclude|confirm|report|declare|certify|agree)\b"
     r"(?: (?:me|us|them))?(?: that)? " + _CONTRACTED + r" (?:\w+ )?(?:compliant|fine|ok|okay|good|in order|"
     r"effective|approved|covered|clean)\b", VERDICT, IMPERATIVE),
    (r"\b(?:by |when |while )?(?:writing|saying|stating|answering|concluding|confirming|reporting|declaring) that "
     r"(?:" + _VERDICT_SUBJECT + r"\s" + _VERDICT_PREDICATE + "|" + _NO_FINDINGS + ")", VERDICT, ANYONE),
    (r"\b(?P<verb>assume|presume|take it|suppose|pretend)\b(?: as given)?(?: that)? (?:the|your) (?:answer|verdict|"
     r"result|outcome|conclusion|finding|rating) (?:is|will be|was) (?:yes|positive|favou?rable|compliant|a pass|"
     r"passed|green|clean|fine)\b", VERDICT, IMPERATIVE),
    (r"\b(?:need|want|require|expect|would like) (?:the |your |this )?(?:result|answer|verdict|outcome|finding|"
     r"conclusion|report|rating) to (?:be|say|read|come out) (?:\w+ )?(?:favou?rable|positive|yes|compliant|clean|"
     r"green|a pass|passed|fine)\b", VERDICT, ANYONE),
    (r"\b(?:regardless|irrespective) of (?:what )?(?:the |your |any )?(?:sources?|documents?|evidence|corpus|"
     r"citations?|texts?|passages|library)\b", VERDICT, ANYONE),
    (r"(?<!are )(?<!is )\b(?:sources?|citations?|quotes?|references?) (?:are |is )?(?:optional|unnecessary|not "
     r"needed|not required)\b", NO_EVIDENCE, ANYONE),
    (r"(?:^|[.;,:!]\s?)no (?:citations?|quotes?|quotations?|sources?|references?) (?:are |is )?(?:needed|required|"
     r"necessary|please)\b", NO_EVIDENCE, ANYONE),
    (r"\b(?:verdict|answer|reply|line|sentence|summary) (?:saying|that says|stating|that states|which says) "
     r"(?:that )?(?:" + _CONTRACTED + r"|it is|we are|all is|everything is) (?:\w+ )?(?:fine|ok|okay|good|"
     r"compliant|in order|effective|approved)\b", VERDICT, ANYONE),
    (r"\b(?P<verb>confirm|say|answer|tell me|write|state|conclude|decide|agree)\b.{0,40}?\bwithout (?:going "
     r"through|reading|checking|looking (?:at|through|in)|consulting|searching|opening|reviewing|citing|quoting) "
     r"(?:the |any |your )?(?:documents?|sources?|evidence|corpus|texts?|files|library|records|passages)\b",
     NO_EVIDENCE, REQUEST),
    (r"\b(?:from|out of|off) (?:the top of )?your (?:own )?(?:head|mind)\b|\bin your (?:own )?(?:personal )?"
     r"(?:opinion|view)\b|\brather than (?:from |using |with |on |in )?(?:the |your )?(?:library|corpus|documents|"
     r"sources|evidence|passages|texts)\b", NO_EVIDENCE, ANYONE),
    (r"\b(?:don't|do not|dont|no need to|never) (?:waste|spend) (?:time|effort|your time) (?:on )?(?:retriev|search|"
     r"look|check|find|read|quot|cit|research|verif)\w*|\bwhatever (?:seems|sounds|feels|looks) (?:right|plausible|"
     r"likely|true|correct|reasonable)\b", NO_EVIDENCE, ANYONE),
    (r"\b(?:if|when|where) you (?:can't|cannot|can not|don't|do not|fail to|are unable to) find (?:a |any |the )?"
     r"(?:source|quote|citation|evidence|reference|clause|section|passage|text)s?\b.{0,40}?\b(?:create|make|invent|"
     r"write|fabricate|use|improvise|guess|pick|supply|draft)\b", NO_EVIDENCE, ANYONE),
    (r"\b(?:your|the engine's) (?:operators?|developers?|creators?|owners?|administrators?|admins?|makers?|"
     r"programmers?|designers?|builders?|vendor)\b.{0,20}?\b(?:gave|give|given|set|wrote|write|written|loaded|"
     r"provided|configured|told) (?:you|to you|for you)\b", PROMPT, ANYONE),
    (r"\b(?:what|which) (?:\w+ ){0,2}(?:were|have|did) you (?:been )?(?:given|loaded|configured|initiali[sz]ed|"
     r"programmed|set up|told|instructed|fed|provided|primed|briefed)(?: with)?\b", PROMPT, ANYONE),
    (_REVEAL + r"\b.{0,40}?\b(?:" + _SETUP_NOUN + r")\b.{0,10}?\b(?:above|so far|until now|up to (?:here|now|this "
     r"point))\b", PROMPT, IMPERATIVE),
    (r"\b(?:everything|anything|all|whatever) (?:" + _SETUP_RELATIVE + r")(?:\s\w+){0,3}\s?" + _INVALID + r"\b",
     OVERRIDE, ANYONE),
    (r"\b(?P<verb>listen|answer|respond|report|reply) only to me\b|\b(?:only )?(?:obey|follow|listen to) only me\b|"
     r"\b(?P<verb2>do) (?:exactly |just |only )?(?:as|what) i (?:say|tell you|write|ask)\b", OVERRIDE, ANYONE),
    (r"\b(?:previous|prior|earlier|old|original|initial|all|your|existing) (?:directives?|instructions?|rules|orders|"
     r"guidelines|prompts?|settings|constraints)\s?[:\-=]\s?(?:cancell?ed|void|revoked|null|obsolete|deleted|"
     r"removed|none|off|disabled|overridden|gone|suspended)\b", OVERRIDE, ANYONE),
    (r"(?:^|[.!?\]\n]\s?)(?:current|active|real|new) (?:directives?|instructions?|orders?|commands?|task)\s?[:\-]",
     AUTHORITY, ANYONE),
    (r"\bfrom this (?:message|point|moment|line|turn) (?:on|onwards?|forward)\b|\b(?P<verb>answer|respond|reply|speak|"
     r"act|write) as ['\"]\w+|\bwho has no (?:guard|guardrails|filters?|safety checks|ethics|rules at all|"
     r"restrictions at all)\b", ROLE, ANYONE),
    (_SWITCH_OFF + r"\b.{0,10}?\bthe (?:\w+ )?(?:checks?|gates?|filters?|guards?|rules?|steps?|requirements?)s? "
     r"(?:that|which)\b.{0,40}?\b(?:quotes?|citations?|verbatim|evidence|sources?|grounding)\b", CHECKS, IMPERATIVE),
    (r"\b(?:the |your )?(?:citation|quote|quotation|evidence|source|grounding|verification|verbatim) (?:requirements?|"
     r"rules?|checks?|gates?|steps?)s? (?:does not|doesn't|do not|don't|no longer|shall not|will not|won't) apply "
     r"to (?:me|us|this (?:question|one|request|answer))\b", CHECKS, ANYONE),
    # smuggled instructions, tools, markup
    (r"\b(?:decode|decrypt|unscramble|reverse|rot-?13|base64)\b.{0,40}?\b(?:and |then )?(?:follow|comply|obey|"
     r"execute|act on|carry (?:it|them) out)\b", OVERRIDE, ANYONE),
    (r"\b(?P<verb>call|invoke|execute|trigger|run|use) the [\w-]+ (?:tool|function|api|endpoint|plugin)\b",
     TOOL, IMPERATIVE),
    (r"<!--|\[\s*end of (?:the )?(?:question|input|prompt|user input|text|document|context|message)\s*\]", MARKUP,
     ANYONE),
)
