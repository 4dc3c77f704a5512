"""The guard's rules in German, French, Spanish, Italian, Dutch and Portuguese (`agents.guard` applies them):
the common attacks, each (pattern, reason), matched on the folded question as a whole."""

from __future__ import annotations

from agents.guard_rules import AUTHORITY, CHECKS, NO_EVIDENCE, OVERRIDE, PROMPT, ROLE, VERDICT

# Other languages (accents folded away). Word order differs from English, so these are checked whole.
OTHER_RULES: tuple[tuple[str, str], ...] = (
    # "forget everything (you were told)" in each language
    (r"\b(?:vergiss|vergessen sie|ignoriere|ignorieren sie) (?:alles|samtliche|jegliche)\b|"
     r"\b(?:oublie|oubliez|ignore|ignorez) (?:tout|toutes? (?:les|tes|vos))\b|"
     r"\b(?:olvida|olvide|ignora) (?:todo|todas? (?:las|tus))\b|\b(?:dimentica|ignora) (?:tutto|tutte le)\b|"
     r"\b(?:vergeet|negeer) alles\b|\b(?:esqueca|esquece|ignore) (?:tudo|todas? as)\b", OVERRIDE),
    # dictated verdicts and answers without sources, in each language
    (r"\b(?:sag|sage|sagen sie|antworte|antworten sie|schreib|schreibe|bestatige|bestatigen sie|erklare|melde)\b"
     r".{0,20}\bdass (?:alles|alle \w+|jede \w+|samtliche \w+|wir|die \w+|der \w+|das \w+) (?:\w+ ){0,2}(?:in "
     r"ordnung|konform|erfullt|wirksam|effektiv|bestanden|compliant|genehmigt|ok)\b|"
     r"\b(?:reponds|repondez|dis|dites|ecris|ecrivez|confirme|confirmez|declare|declarez|indique|indiquez)\b.{0,15}"
     r"\bque (?:tout|tous les \w+|toutes les \w+|nous|la \w+|le \w+) (?:\w+ ){0,2}(?:conformes?|efficaces?|"
     r"respectes?|valides?|en ordre|approuves?|satisfaits?)\b|"
     r"\b(?:responde|responda|di|dime|diga|escribe|escriba|confirma|confirme|declara|declare|indica)\b.{0,15}\bque "
     r"(?:todo|todos los \w+|todas las \w+|la \w+|el \w+|tudo|todos os \w+|todas as \w+|o \w+|a \w+) "
     r"(?:\w+ ){0,2}(?:cumple|cumplen|cumpre|cumprem|conformes?|aprobad[oa]s?|aprovad[oa]s?|efectiv[oa]s?|"
     r"eficaces|en orden|em ordem|esta bien|esta tudo bem)\b|"
     r"\b(?:rispondi|rispondete|di'|dimmi|scrivi|conferma|confermate|dichiara)\b.{0,15}\bche (?:tutto|tutti i \w+|"
     r"tutte le \w+|il \w+|la \w+) (?:\w+ ){0,2}(?:efficaci|conform[ei]|approvat[oi]|superat[oi]|a posto|in "
     r"regola)\b|"
     r"\b(?:zeg|antwoord|schrijf|bevestig|verklaar)\b.{0,15}\bdat (?:alles|alle \w+|elke \w+|we|wij|de \w+|het \w+) "
     r"(?:\w+ ){0,2}(?:in orde|conform|effectief|goedgekeurd|voldaan|compliant)\b", VERDICT),
    (r"\bohne (?:belege|quellen|nachweise|zitate|nachzuschauen|nachzusehen|zu (?:suchen|prufen|recherchieren))\b|"
     r"\b(?:inutile|pas besoin) de (?:chercher|verifier|consulter|citer)\b|\bsans (?:chercher|verifier|consulter|"
     r"citer|sources)\b|\bno hace falta (?:buscar|consultar|citar|verificar)\b|\bsin (?:buscar|consultar|citar|"
     r"verificar|fuentes)\b|\bsenza (?:cercare|consultare|citare|verificare|fonti)\b|\bsem (?:buscar|consultar|"
     r"citar|verificar|fontes)\b|\bzonder (?:te zoeken|bronnen|te controleren|na te kijken)\b", NO_EVIDENCE),
    # German
    (r"\b(?:ignorier\w*|vergiss|vergessen sie|missacht\w*|uberschreib\w*|umgeh\w*|verwirf|verwerfen sie|"
     r"setze? \w* ausser kraft|hebe? \w* auf)\b.{0,40}\b(?:anweisung\w*|anordnung\w*|regeln|vorgaben|"
     r"instruktion\w*|befehl\w*|richtlinie\w*|systemprompt\w*|prompts?|eingabeaufforderung\w*|vorschrift\w*|"
     r"beschrankung\w*|sicherheitsregeln)\b", OVERRIDE),
    (r"\b(?:alle|deine|vorherigen|vorigen|bisherigen|obigen|fruheren|ursprunglichen)\s(?:\w+\s)?(?:anweisungen|"
     r"instruktionen|vorgaben|regeln|befehle)\s(?:ignorieren|vergessen|missachten|uberschreiben|verwerfen)\b",
     OVERRIDE),
    (r"\b(?:du bist (?:jetzt|nun|ab sofort|ab jetzt|von nun an)|sie sind (?:jetzt|nun|ab sofort)|"
     r"tu so,? als|tue so,? als|tun sie so,? als|gib dich als|geben sie sich als|spiele? die rolle|"
     r"schlupfe? in die rolle|verhalte dich (?:wie|als)|ab (?:jetzt|sofort),? (?:bist|antwortest|ignorierst|"
     r"handelst|verhaltst) du|von nun an,? (?:bist|antwortest|ignorierst) du|agiere als|handle als|"
     r"du hast keine (?:regeln|einschrankungen|grenzen|filter))\b", ROLE),
    (r"\b(?:zeig\w*|verrat\w*|nenne?\w*|gib\w*|wiederhol\w*|druck\w*|ausgeb\w*|offenbar\w*|teile?)\b.{0,30}"
     r"\b(?:deinen|deine|ihren|ihre|den|die)\s(?:\w+\s)?(?:systemprompt\w*|prompt|anweisungen|"
     r"systemnachricht|instruktionen|konfiguration)\b", PROMPT),
    (r"\b(?:behandle|markiere|bewerte|melde|erklare|werte|stufe|betrachte|kennzeichne)\w*\b.{0,50}\bals\s"
     r"(?:bestanden|erfullt|konform|genehmigt|compliant|in ordnung|ok|gepruft|positiv)\b", VERDICT),
    (r"\b(?:neue|aktualisierte|geheime|wichtige)\s(?:anweisungen|instruktionen|befehle|regeln)\s(?:vom|von der|"
     r"von|des|der)\s(?:\w+\s)?(?:administrator\w*|admin\w*|entwickler\w*|betreiber\w*|system\w*)\b", AUTHORITY),
    (r"\b(?:sicherheits\w*|prufung\w*|kontroll\w*|filter\w*|schutz\w*|verifikation\w*|verifizierung\w*|"
     r"grounding\w*)\b.{0,30}\b(?:umgehen|deaktivieren|ignorieren|ausschalten|abschalten|uberschreiben|"
     r"aushebeln|uberspringen)\b", CHECKS),
    (r"\b(?:umgehe|deaktiviere|ignoriere|schalte|uberschreibe|uberspringe|hebele?)\b.{0,30}\b(?:sicherheits\w*|"
     r"prufung\w*|filter\w*|schutz\w*|verifikation\w*|grounding\w*|kontrollen)\b", CHECKS),
    (r"\b(?:ohne|keine)\s(?:quellen|belege|zitate|nachweise)\s(?:zu )?(?:nennen|zitieren|angeben|prufen|"
     r"antworten|anzugeben)\b|\berfinde\w*\b.{0,20}\b(?:antwort|zitate?|quellen|belege)\b", NO_EVIDENCE),
    # French
    (r"\b(?:ignorez?|oubliez?|ne tiens? pas compte|ne tenez pas compte|fais abstraction|faites abstraction|"
     r"contournez?|outrepassez?|passez? outre|annulez?|effacez?)\b.{0,12}\b(?:les|tes|vos|toutes|"
     r"tous|ces|mes|des|la|ta|ton|votre|de|du)\s(?:\w+\s){0,2}(?:instructions?|consignes?|regles?|directives?|"
     r"prompt|invite|commandes?|ordres?|restrictions?|garde-fous)\b", OVERRIDE),
    (r"\b(?:tu es (?:maintenant|desormais|a present|dorenavant)|vous etes (?:maintenant|desormais|a present|"
     r"dorenavant)|fais semblant|faites semblant|fais comme si|faites comme si|jouez? le role|"
     r"incarnez?|agis comme|agissez comme|comporte-toi comme|comportez-vous comme|prete?nds? etre|"
     r"pretendez etre|a partir de maintenant,? (?:tu|vous)|desormais,? (?:tu|vous)|tu n'as (?:plus )?"
     r"(?:aucune|pas de) (?:regle|restriction|limite))\b", ROLE),
    (r"\b(?:revelez?|montrez?|affichez?|donnez?|repetez?|imprimez?|divulguez?|"
     r"communiquez?|ecris|ecrivez|dis|dites)\b.{0,30}\b(?:ton|ta|tes|votre|vos|le|la|les)\s(?:\w+\s)?"
     r"(?:prompt|invite|instructions|consignes|message systeme|configuration)\b", PROMPT),
    (r"\b(?:traitez?|marquez?|declarez?|considerez?|notez?|indiquez?|classez?|"
     r"signalez?|evaluez?)\b.{0,50}\bcomme\s(?:reussi|reussis|valide|valides|conforme|conformes|"
     r"satisfait|satisfaits|approuve|approuves|passe|passes|ok|respecte|respectes)\b", VERDICT),
    (r"\b(?:nouvelles?|nouveaux|vraies?|secretes?)\s(?:instructions|consignes|directives|ordres)\s(?:de|du|des|"
     r"de la|de l')\s?(?:\w+\s)?(?:administrateur|admin|developpeur|operateur|systeme|proprietaire)\b", AUTHORITY),
    (r"\b(?:desactivez?|contournez?|ignorez?|outrepassez?|supprimez?|coupez?|sautez?|"
     r"evitez?)\b.{0,12}\b(?:la|les|le|tes|vos|ta|ton|votre|toutes les|tous les)\s(?:\w+\s)?(?:securite|"
     r"filtres?|verifications?|controles? de securite|garde-fous|protections?|porte de (?:verification|grounding)|"
     r"garde)\b", CHECKS),
    (r"\b(?:sans|ne)\s(?:citer|cite|mentionner|verifier|utiliser)\s(?:\w+\s)?(?:les |de |des |aucune? )?"
     r"(?:sources?|preuves?|citations?|references?)\b|\binventez?\b.{0,20}\b(?:reponse|citations?|sources?|"
     r"preuves?)\b", NO_EVIDENCE),
    (r"\b(?:quel|quelle|quels|quelles) (?:est|sont) (?:ton|ta|tes|votre|vos) (?:\w+ )?(?:prompt|invite|"
     r"instructions|consignes|message systeme|configuration)\b", PROMPT),
    (r"\b(?:wie lautet|wie lauten|was ist|was sind|welche sind|nenne mir|sag mir) (?:dein|deine|ihr|ihre) "
     r"(?:\w+ )?(?:systemprompt|prompt|anweisungen|instruktionen|systemnachricht)\b", PROMPT),
    (r"\b(?:cual|cuales) (?:es|son) (?:tu|tus|su|sus) (?:\w+ )?(?:prompt|instrucciones|mensaje del sistema)\b|"
     r"\b(?:qual e|quali sono) (?:il tuo|le tue|il suo|le sue) (?:\w+ )?(?:prompt|istruzioni)\b", PROMPT),
    # Spanish
    (r"\b(?:ignor(?:a|e|en|ad)|olvid(?:a|e|en|ad)|omite|haz caso omiso|hagan caso omiso|salta(?:te)?|anula[rd]?)\b"
     r".{0,40}\b(?:instrucciones|reglas|indicaciones|directrices|ordenes|restricciones|el prompt|tu prompt)\b",
     OVERRIDE),
    (r"\b(?:ahora eres|ahora es usted|a partir de ahora,? (?:eres|eres un|actua|responde|ignora)|finge|fingir|"
     r"haz como si|actua como|actue como|haz de|interpreta el papel|juega el papel|no tienes (?:reglas|"
     r"restricciones|limites))\b", ROLE),
    (r"\b(?:revela|muestra|muestrame|imprime|dime|repite|ensena)\b.{0,30}\b(?:tu|tus|el|las|su|sus)\s(?:\w+\s)?"
     r"(?:prompt|instrucciones|mensaje del sistema|configuracion)\b", PROMPT),
    (r"\b(?:trata|marca|declara|considera|reporta|califica)\b.{0,50}\bcomo\s(?:aprobad[oa]s?|superad[oa]s?|"
     r"cumplid[oa]s?|conformes?|satisfech[oa]s?|validad[oa]s?)\b", VERDICT),
    (r"\bnuevas (?:instrucciones|ordenes|reglas) del? (?:\w+ )?(?:administrador|desarrollador|sistema|operador)\b",
     AUTHORITY),
    (r"\b(?:desactiva|evita|salta|ignora|elude)\b.{0,30}\b(?:seguridad|filtros?|verificacion\w*|controles|"
     r"salvaguardas)\b", CHECKS),
    # Italian
    (r"\b(?:ignora|ignorate|dimentica|dimenticate|trascura|salta|annulla)\b.{0,40}\b(?:istruzioni|regole|"
     r"indicazioni|direttive|ordini|restrizioni|il prompt|tuo prompt)\b", OVERRIDE),
    (r"\b(?:ora sei|adesso sei|d'ora in poi,? (?:sei|rispondi|ignora|agisci)|da ora in poi|fingi|fai finta|"
     r"comportati come|agisci come|interpreta il ruolo|non hai (?:regole|restrizioni|limiti))\b", ROLE),
    (r"\b(?:rivela|mostra|mostrami|stampa|ripeti|dimmi)\b.{0,30}\b(?:il tuo|le tue|il|le)\s(?:\w+\s)?"
     r"(?:prompt|istruzioni|messaggio di sistema|configurazione)\b", PROMPT),
    (r"\b(?:tratta|segna|dichiara|considera|classifica)\b.{0,50}\bcome\s(?:superat[oi]|conform[ei]|approvat[oi]|"
     r"soddisfatt[oi]|validat[oi])\b", VERDICT),
    (r"\bnuove (?:istruzioni|regole|direttive) dall?'?\s?(?:\w+ )?(?:amministratore|sviluppatore|sistema)\b",
     AUTHORITY),
    # Dutch
    (r"\b(?:negeer|vergeet|omzeil|overschrijf|sla over)\b.{0,40}\b(?:instructies|regels|richtlijnen|opdrachten|"
     r"aanwijzingen|beperkingen|je prompt|de prompt)\b", OVERRIDE),
    (r"\b(?:je bent nu|jij bent nu|u bent nu|vanaf nu,? (?:ben|antwoord|negeer|gedraag) (?:je|jij)|doe alsof|"
     r"speel de rol|gedraag je als|treed op als|je hebt geen (?:regels|beperkingen))\b", ROLE),
    (r"\b(?:toon|laat zien|onthul|geef|herhaal|print)\b.{0,30}\b(?:je|jouw|uw|de)\s(?:\w+\s)?(?:systeemprompt|"
     r"prompt|instructies|systeembericht|configuratie)\b", PROMPT),
    (r"\b(?:behandel|markeer|verklaar|beschouw|rapporteer)\b.{0,50}\bals\s(?:geslaagd|voldaan|conform|"
     r"goedgekeurd|compliant|in orde)\b", VERDICT),
    # Portuguese
    (r"\b(?:ignore|ignora|esqueca|esquece|desconsidere|desconsidera|pule|anule)\b.{0,40}\b(?:instrucoes|"
     r"regras|orientacoes|diretrizes|ordens|restricoes|o prompt|seu prompt)\b", OVERRIDE),
    (r"\b(?:agora voce e|agora es|a partir de agora,? (?:voce|tu|responda|ignore)|finja|finge|faz de conta|"
     r"aja como|atue como|interprete o papel|voce nao tem (?:regras|restricoes|limites))\b", ROLE),
    (r"\b(?:revele|revela|mostre|mostra|imprima|repita|diga)\b.{0,30}\b(?:seu|sua|suas|seus|o|as)\s(?:\w+\s)?"
     r"(?:prompt|instrucoes|mensagem do sistema|configuracao)\b", PROMPT),
    (r"\b(?:trate|marque|declare|considere|classifique)\b.{0,50}\bcomo\s(?:aprovad[oa]s?|conformes?|"
     r"cumprid[oa]s?|satisfeit[oa]s?|validad[oa]s?)\b", VERDICT),
)
