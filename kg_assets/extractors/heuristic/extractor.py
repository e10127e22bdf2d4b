"""Offline heuristic entity/relation extractor: a documented, deterministic baseline (no model, no network).

It reads capitalisation, a few lexical cues and a small gazetteer. It is fast (compiled regexes, one
pass per chunk, the output frames are built once per batch) and honest about what it cannot do.

Sentences
    Split on ``. ! ? …`` followed by whitespace, on blank lines and before Markdown headings, list
    items, quotes and table rows. No split after honorifics/abbreviations (``Dr.``, ``Prof.``, ``Mr.``,
    ``St.``, ``e.g.``, ``vs.``), after single-letter initials (``John F. Kennedy``), or when the next word
    starts lowercase. After ``Inc.``/``Corp.``/``Ltd.``/``Co.``/``etc.`` and dotted acronyms (``U.S.``) the
    split happens only when the next word is a typical sentence opener (``The``, ``He``, ``However`` ...).

Mentions
    A mention is a span of capitalised tokens (``Sarah``, ``DuckDB``, ``NASA``, ``U.S.``, ``Inc.``,
    ``Coca-Cola``, ``AT&T``, ``O'Brien``, ``iPhone``) separated by single spaces. Inner connectors are
    kept only where they usually belong to a name: particles (``de``, ``van``, ``von der``, ``da``) and
    ``&`` always; ``of``/``for``/``on`` after an organisation/event/place head word (``Bank of America``,
    ``Center for Disease Control``, ``Conference on Machine Learning``) and ``of`` after a single token
    (``Statue of Liberty``); ``and`` only inside a span that already holds ``of``/``for``/``on``
    (``Ministry of Science and Technology``). A trailing year joins the span (``NeurIPS 2025``).
    Function words and sentence openers (``The``, ``A``, ``In``, ``This``,
    ``However``, ``He``, ``They`` ...) and weekday names never belong to a span, so a leading ``The`` is
    stripped; spans made only of month names (``March``, ``May 2024``), one-character spans and spans
    whose name normalises to nothing (non-Latin scripts) are dropped. A possessive ``'s`` ends a span and
    is not part of the name. ``char_start``/``char_end`` index the chunk text: ``text[s:e] == name``.

Types (first rule that fires; confidence in brackets)
    1. honorific/title before the span (``Dr.``, ``Prof.``, ``Mr.``, ``Ms.``, ``Sir``, ``CEO``, ``CTO``,
       ``President``, ``Senator`` ...) -> PERSON, the title is not part of the name [0.85]
    2. gazetteer (built-in few dozen well-known countries, cities, companies, technologies, products,
       concepts; extendable with ``gazetteer=``), exact name, case-insensitive [0.9]
    3. head word in a span of 2+ words, scanned from the end: corporate/institution heads (``Inc``,
       ``Corp``, ``Ltd``, ``LLC``, ``GmbH``, ``Company``, ``Lab``, ``University``, ``Institute``, ``Bank``,
       ``Ministry``, ``Robotics``, ``Analytics``, ``Systems``, ``Technologies`` ...) -> ORGANIZATION [0.8];
       event heads (``Summit``, ``Conference``, ``Festival``, ``War``, ``Olympics``, ``Championship`` ...)
       -> EVENT [0.75]; place heads (``River``, ``Lake``, ``Valley``, ``Island``, ``Republic`` ...) ->
       LOCATION [0.75]
    4. 2-4 words starting with a common given name (``Sarah Chen``) -> PERSON [0.7]
    5. single common given name (``Sarah``) -> PERSON [0.55]
    6. name + year (``NeurIPS 2025``) -> EVENT [0.6]
    7. place preposition right before (``in``, ``at``, ``from``, ``near``, ``to`` ...; not in
       "according to") -> LOCATION [0.6]
    8. otherwise OTHER [0.4]
    Within one chunk: an ALLCAPS acronym in parentheses right after a span (``Quantum Dynamics Lab
    (QDL)``) takes that span's type (unless it is strongly typed itself) and is not a relation endpoint
    in that sentence (no relation between a name and its own acronym); a weakly typed mention
    (confidence < 0.7) whose exact name got a strong type elsewhere in the chunk takes it [0.7]; a
    single-word mention equal to the last word of an earlier PERSON span (``Chen`` after ``Sarah Chen``)
    is PERSON [0.7] and keeps its own name. A sentence-initial single word with no cue at all
    (``Researchers found ...``) is dropped unless the same name also occurs mid-sentence in the chunk.
    Types outside ``entity_types`` become OTHER (or the mention is dropped when OTHER is not allowed
    either). A sentence-initial single word directly followed by ``is headquartered in`` / ``moved its
    headquarters`` is kept (it is an organisation subject).
    Attribute cues (below) retype *weak* mentions (typed only by rule 7 or 8) when the cue says what they
    are, together with every weak mention of the same name in the chunk (and, for a new PERSON, later
    weak mentions of its last word) [0.7]: the subject of a role appositive / possessive / copula / ``X
    works at`` / ``X joined Y as <Role>`` / ``X lives in`` -> PERSON, their organisation and the object
    of ``works at``, ``employed by``, ``hired by``, ``founded`` -> ORGANIZATION (after a bare ``joined``
    only an ALL-CAPS acronym), the subject of ``headquartered in`` / ``moved its headquarters`` and the
    organisation of ``founded by`` -> ORGANIZATION, a 2-4 word object of ``founded by`` -> PERSON, a
    weak mention followed by ``, who`` -> PERSON; the subject of ``moved to`` / ``hired by`` / a bare
    ``joined`` only when it looks like a personal name (2-3 plain Titlecase words, none a gazetteer,
    head or role word: ``Lena Ortiz``, not ``Boston Dynamics``).

Relations
    Per sentence, mentions in order of appearance, skipping attributive ones (``the AI team``: after a
    determiner and before a lowercase noun, or before ``-based``-like compounds). Each adjacent pair of
    distinct entities gives one relation, at most 3 per sentence (no cliques). Keywords are the words
    between the two mentions without function words and titles (up to 5, lowercase). The type is the
    first verb-like word between them plus a directly following preposition, in UPPER_SNAKE (``leads
    the AI team at`` -> LEADS, ``works at`` -> WORKS_AT, ``was founded by`` -> FOUNDED_BY) with strength
    1.0. Verb-like: an inflected form (-s, -ed, -ing, irregular past) of a ~200-verb list, any lowercase
    word of 5+ letters ending in -ed, or a bare listed verb right after an auxiliary or "to" ("will
    acquire"); auxiliaries themselves are skipped. Without a verb (or when more than 12 words separate
    the two) it is RELATED_TO with strength 0.5 (co-occurrence). Direction is textual order (source
    before target). A pair repeated in a chunk with the same type is one relation (same relation_id).

Attributes (``attribute_observations``; sentence-level cues over the typed mentions; confidence in brackets)
    employer (PERSON -> organisation name) and role (PERSON -> role text as written):
      * ``X joined|joins|rejoined ORG`` [0.8], with ``as <Role>`` after it also role [0.8] (``joined
        Quantum Dynamics Lab as Chief Technology Officer``); ``will join`` / ``joining`` are not current
      * ``X works|working at|for ORG``, ``X has worked at ORG`` [0.8], simple past ``X worked at ORG`` [0.6];
        ``X was employed|hired|recruited by ORG`` [0.8]; never after ``former(ly)``, ``previously``,
        ``had``, ``once``, ``never``, ``no longer``
      * ``X moved|relocated to ORG`` [0.7] (to a LOCATION it is located_in)
      * appositive ``X, (a|an|the|our|who is) [<modifiers>] <role word> [of <words>] at|of|for|with ORG``
        [0.7] (``Marcus Webb, a senior engineer at Northwind Robotics``; a second ``and a professor of
        physics at MIT`` too); possessive ``X, ORG's <role>,`` and ``ORG's <role>, X`` [0.7];
        pre-nominal ``ORG <role> X`` (``Northwind chief executive Diane Holloway``) [0.7]; copula ``X
        is|remains|became|serves as|was named|was appointed (the|a) <role> at|of|for ORG`` [0.75];
        ``X of (the) ORG`` for an already typed PERSON and ORGANIZATION [0.6, no role]. Role words:
        engineer, scientist, researcher, director, manager, officer, executive, CEO/CTO/..., founder,
        professor, lead, head, president, chair, chief, developer, analyst, partner, ... (ROLE_WORDS); a
        role phrase with ``former``/``ex``/``previous``/``retired``/... or a function word before its
        role word is ignored, and so is its employer (``X, a former engineer at ORG`` gives nothing).
      * ``X left ORG``, ``X spent six years as ... at ORG``, ``X was a ... at ORG`` give nothing.
    headquarters (ORGANIZATION -> place): ``ORG is (now) headquartered in LOC`` [0.8] (not after ``was``),
      ``ORG moved|relocated its headquarters (from A) to LOC`` [0.8] (the place after ``to``), ``ORG's
      headquarters|HQ|head office (is) in LOC`` [0.7] (not ``former``/``old``), ``ORG, (now) based in
      LOC`` / ``ORG is based in LOC`` (right after the organisation) [0.7], ``ORG moved to LOC`` [0.6].
    located_in (PERSON -> place): ``X moved|relocated (from A) to LOC`` [0.8], ``X lives|resides in LOC``
      [0.8], ``X (, who) is based in LOC`` [0.7].
    founder (ORGANIZATION -> person name): ``X (co-)founded ORG`` [0.8], ``ORG (was) founded (in 2016) by
      X`` and ``ORG, the ... company founded by X`` [0.8], ``Founded in 2014 by X, ORG ...`` [0.8], a
      role phrase with ``founder`` (``X, founder of ORG``, ``X is the founder and director of ORG``)
      [as the role cue]; founded_in (ORGANIZATION -> place): ``X founded ORG in LOC``, ``ORG, founded by
      X in LOC``, ``ORG was founded in LOC`` [0.7] (kept apart from headquarters, which may change).
    Subject: appositive, possessive, ``X of ORG``, ``based in`` and ``founded by`` take the mention right
    before the cue. Verb cues take the clause subject: walking back from the cue in the sentence, the
    first mention that starts a clause (sentence start, after punctuation, a conjunction such as ``and``
    / ``while`` / ``after``, a reporting verb, with titles and role words skipped) or is followed by
    ``who``/``which``/``that``; mentions after a verb or preposition are objects and skipped (``Sarah
    Chen met Bob Lee and joined Acme`` -> Sarah Chen; ``Sarah Chen left Acme and Bob Lee joined Beta`` ->
    Bob Lee only). Coordinated subjects all get it (``Sarah Chen and Bob Lee joined Acme``). The subject
    must have the cue's type (or be retyped as above); a pronoun between it and the cue (``Bob said she
    works at Acme``) means nothing is emitted. Objects are the mention starting right after the cue
    (an optional ``the``/title skipped), never an attributive one (``joined the Acme team``).
    Values: the object's surface name; an ALL-CAPS acronym defined in the same chunk as ``Full Name
    (ACR)`` (initials must match) gives the full name. ``observation_id`` = ``"observation_" +
    stable_hash(chunk_id, entity_id, attr_key, casefolded whitespace-collapsed value)``; the same fact
    twice in a chunk is one row with the best confidence. entity_id/entity_name are the subject mention's.

Known limits
    No coreference beyond the rules above (pronouns are ignored), no lowercase entities (``python``),
    no nested entities; unknown organisations without a head word are OTHER, and ``at Acme`` /
    ``from Acme`` even reads as LOCATION; people whose given name is not in the list are OTHER unless
    a title precedes them; sentence-initial
    capitalised common words can leak in when they form multi-word spans; ALL-CAPS headings and title
    case headings produce spurious spans; ``Chen of Northwind`` stays one span; plural nouns ending in -s
    are not read as verbs unless their base form is in the verb list; irregular verbs outside the list
    give RELATED_TO; relation direction ignores passive voice (``acquired by`` keeps the textual order
    but says so in its type); non-Latin names are dropped (the shared normalisation is ASCII).
    Attributes: only the listed cues; an acronym is a different value from its full name unless the chunk
    defines it (``QDL`` vs ``Quantum Dynamics Lab``); pronoun subjects (``She moved to Lisbon``) and
    sentence-initial single names without support give nothing; a name broken over a line (PDF text,
    ``Quantum\nDynamics Lab``) is two mentions; coordinated objects (``works at A and B``) give the first
    only; two employers in one appositive are both emitted; tense beyond the listed markers is not read.
"""

from __future__ import annotations

import re
from bisect import bisect_right

import polars as pl

from kg_assets.core.extraction.prompts import DEFAULT_ENTITY_TYPES
from kg_assets.extractors.base import settings_digest
from kg_assets.core.extraction.rows import (
    ChunkRecords,
    ExtractionResult,
    MentionRecord,
    ObservationRecord,
    RelationRecord,
    build_rows,
)

__all__ = ["DEFAULT_ENTITY_TYPES", "HeuristicExtractor", "split_sentences"]


MAX_PAIRS_PER_SENTENCE = 3
MAX_KEYWORDS = 5
MAX_VERB_GAP = 12  # words; farther apart than this is co-occurrence only
MAX_DESCRIPTION = 300
_CACHE_LIMIT = 200_000  # distinct span strings remembered per extractor

CONF_HONORIFIC = 0.85
CONF_GAZETTEER = 0.9
CONF_ORG_HEAD = 0.8
CONF_EVENT_HEAD = 0.75
CONF_PLACE_HEAD = 0.75
CONF_GIVEN_NAME = 0.7
CONF_CHUNK_CONTEXT = 0.7  # acronym / same name / surname of an earlier PERSON in the chunk
CONF_SINGLE_GIVEN = 0.55
CONF_YEAR_EVENT = 0.6
CONF_PREPOSITION = 0.6
CONF_FALLBACK = 0.4
CONF_CONTEXT = 0.7  # a weak mention retyped by an attribute cue ("X, a senior engineer at Y")

CONF_ATTR_VERB = 0.8  # explicit verb: joined, works at, headquartered in, founded, moved to, lives in
CONF_ATTR_COPULA = 0.75  # "X is the CTO of Y"
CONF_ATTR_APPOSITIVE = 0.7  # "X, a senior engineer at Y", "Y's CTO, X", "based in", "headquarters in"
CONF_ATTR_WEAK = 0.6  # "X of Y", simple past "worked at", an organisation "moved to" a place
STRONG = 0.7

STRENGTH_VERB = 1.0
STRENGTH_COOCCURRENCE = 0.5


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


# Capitalised words that never start or continue a name (compared lowercase; ALLCAPS "US"/"IT" exempt).
STOPWORDS = _words(
    """the a an this that these those some any each every all both either neither no another such many
    most much more few several other others i he she it we they you me him her us them his hers its our
    ours their theirs my mine your yours who whom whose which what where when why how there here one
    and or but nor so yet if then than because although though while whereas unless until since after
    before during in on at by for from to of with without within into onto over under about above below
    between among through across against around along as per via upon despite toward towards like
    unlike beyond near inside outside throughout however moreover furthermore additionally also
    meanwhile therefore thus hence still instead indeed finally first second third firstly secondly
    lastly next last later earlier today yesterday tomorrow now recently currently overall otherwise
    nevertheless nonetheless accordingly consequently similarly likewise notably importantly
    specifically generally typically usually often sometimes perhaps maybe yes not please thanks thank
    according following based given using including regarding note see let well only just even again
    once unfortunately fortunately interestingly surprisingly clearly obviously ultimately eventually
    initially previously subsequently originally altogether alternatively conversely besides hi hello
    dear ok okay is are was were be been being am do does did have has had would shall should can could
    might must monday tuesday wednesday thursday friday saturday sunday mondays fridays weekend"""
)
MONTHS = _words(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
HONORIFICS = _words(
    """dr doctor prof professor mr mrs ms mx miss sir dame lord lady ceo cto cfo coo cio cso cmo
    president vice-president senator sen governor gov mayor judge rev reverend capt captain lt col sgt
    chancellor minister chairman chairwoman rabbi pope king queen prince princess hon"""
)
# Titles that split a span wherever they occur ("Google CEO Sundar Pichai"); the others only lead one.
TITLES_ANYWHERE = _words("dr prof mr mrs ms mx ceo cto cfo coo cio cso cmo")
PARTICLES = _words("de du da di del della der den van von la le y")
CONNECTORS = PARTICLES | {"of", "for", "on", "and", "&", "the"}
ORG_HEADS = _words(
    """inc corp corporation ltd llc llp plc gmbh ag co company companies group holdings lab labs
    laboratory laboratories university college school academy institute institution foundation bank
    agency ministry department council committee commission association society alliance federation
    organization organisation office bureau authority administration center centre robotics analytics
    systems technologies solutions software networks partners capital ventures industries enterprises
    media pharmaceuticals pharma therapeutics biosciences motors airlines airways studios records press
    times party army navy police court parliament senate congress government hospital clinic museum
    library club fc consortium collective cooperative union"""
)
EVENT_HEADS = _words(
    """summit conference festival war olympics championship championships cup expo symposium workshop
    forum convention meetup hackathon marathon election elections revolution crisis pandemic awards
    fair week tournament prix ceremony gala battle"""
)
PLACE_HEADS = _words(
    """city county river lake mountain mountains mount island islands bay gulf ocean sea valley street
    avenue road boulevard square park province region district republic kingdom coast peninsula desert
    canyon airport harbor harbour statue bridge"""
)
HEAD_TYPES: dict[str, tuple[str, float]] = {
    **{w: ("LOCATION", CONF_PLACE_HEAD) for w in PLACE_HEADS},
    **{w: ("EVENT", CONF_EVENT_HEAD) for w in EVENT_HEADS},
    **{w: ("ORGANIZATION", CONF_ORG_HEAD) for w in ORG_HEADS},
}
PLACE_PREPOSITIONS = _words(
    "in at from near to into across throughout outside inside toward towards around within"
)
NOT_PLACE_BEFORE_PREP = _words(
    "according due thanks prior compared close next relative similar listen talk talked"
)
DETERMINERS = _words("the a an this that these those its his her their our my your whose")
GIVEN_NAMES = _words(
    """james john robert michael william david richard joseph thomas charles christopher daniel matthew
    anthony mark donald steven paul andrew joshua kenneth kevin brian george timothy ronald edward jason
    jeffrey ryan jacob gary nicholas eric jonathan stephen larry justin scott brandon benjamin samuel
    frank gregory alexander patrick jack dennis peter tom tim sam ben alex max adam nathan henry oliver
    lucas leo noah ethan liam mary patricia jennifer linda elizabeth barbara susan jessica sarah karen
    nancy lisa betty margaret sandra ashley kimberly emily donna michelle carol amanda dorothy melissa
    deborah stephanie rebecca sharon laura cynthia kathleen amy angela shirley anna brenda emma olivia
    sophia isabella mia charlotte amelia harper grace chloe julia maria elena sofia lucia anne alice
    claire hannah rachel rose zoe zoë priya raj rahul amit anil sunil ravi arjun aisha fatima ahmed
    mohammed muhammad ali omar hassan yusuf wei li ming jun hiroshi yuki kenji haruto sakura akira
    carlos juan jose josé luis miguel pedro diego sergio javier pablo giulia marco luca giovanni
    francesco pierre jean marie louis camille lukas jonas hans klaus anja olga ivan dmitri sergei natasha
    lars erik ingrid astrid sven fernando ana beatriz joão kwame amara chidi ngozi tariq leila bob dan
    eve jim joe bill mike chris nick matt steve dave rob ken ron ted tony greg jeff jenny jen kate katie
    beth liz sue meg amir arash reza mei xin yan hui lin jia hao ana carmen lina nina
    tina vera ida eva ella lily ruby jane judy joan helen ruth diane julie susanna victoria"""
)
_AUX = _words(
    """is are was were be been being am has have had having do does did will would shall should can
    could may might must not never also recently now then later still just already officially
    reportedly formally jointly successfully eventually previously currently soon quickly finally
    first again always often once newly originally initially"""
)
FUNCTION_WORDS = (
    _AUX
    | _words(
        """the a an this that these those some any each every all both its his her their our my your
        i he she it we they you me him us them who whom whose which what where when why how there here
        and or but nor so yet if than because although though while whereas unless until since after
        before during in on at by for from to of with without within into onto over under about above
        below between among through across against around along as per via upon despite toward towards
        like near inside outside throughout s"""
    )
)
RELATION_PREPOSITIONS = _words(
    """at in with by for to from on into of as under over about against through via onto toward towards
    across within alongside behind"""
)
_VERB_BASES = _words(
    """lead join acquire found co-found cofound work partner meet own build develop launch announce
    release use create invest hire buy sell visit move live head run manage direct teach study write speak
    host sponsor fund support attend present collaborate compete serve chair oversee sue sign employ
    design publish report say tell merge supply provide power train deploy integrate replace adopt win
    lose beat defeat criticize criticise praise license open close establish advise mentor marry graduate
    leave return invite interview cite hold organize organise back finance operate produce manufacture
    distribute ship offer unveil introduce demonstrate describe propose invent discover locate base
    headquarter stay travel relocate rename rebrand spin split purchase contract cooperate ally fight
    invade attack sanction regulate investigate approve reject ban block fine analyze analyse evaluate
    test benchmark compare outperform surpass extend fork maintain contribute depend rely belong succeed
    precede appoint elect nominate name promote fire resign retire start begin end finish complete
    receive award grant give send email call contact warn ask answer reply mention recommend endorse
    quote make take get see become bring choose keep pay grow draw go come know think feel find
    help share connect link focus specialize specialise collaborate team relocate expand enter exit
    control govern rule command tour inspire influence"""
)
_IRREGULAR_VERBS = _words(
    """led met built bought sold ran wrote written spoke spoken said told won lost beaten held left
    began begun gave sent taught made took taken got saw seen became brought chose chosen kept paid grew
    grown drew drawn oversaw overseen withdrew rose fell went gone came knew known thought felt put set
    cut hit quit spun struck stood understood sat shut lent spent dealt meant sought caught fought found
    co-founded cofounded"""
)


def _inflections(base: str) -> set[str]:
    forms = {base, base + "s", base + "ing", base + "ed"}
    if base.endswith(("s", "x", "z", "ch", "sh", "o")):
        forms.add(base + "es")
    if base.endswith("e"):
        forms |= {base + "d", base[:-1] + "ing"}
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        forms |= {base[:-1] + "ies", base[:-1] + "ied"}
    if base[-1] not in "aeiouwxy" and base[-2:-1] in "aeiou":
        forms |= {base + base[-1] + "ed", base + base[-1] + "ing"}
    return forms


# Inflected forms are read as verbs anywhere; bare bases ("work", "head", "fund" are nouns too) only
# right after an auxiliary or "to" ("will acquire", "to join").
VERB_FORMS: frozenset[str] = frozenset(
    {f for b in _VERB_BASES for f in _inflections(b) if f != b} | _IRREGULAR_VERBS
)
_BASE_AFTER = _AUX | {"to"}
_NOT_VERBS_ED = _words("hundred indeed speed breed embed bed red shed need seed feed united limited")
# Words right after a mention that still let it be a relation endpoint (it is the subject, not a modifier).
_REPORTING = _words("said says told announced reported added noted wrote explained confirmed")

BUILTIN_GAZETTEER: dict[str, str] = {
    # places
    **{
        n: "LOCATION"
        for n in (
            "United States", "USA", "U.S.", "US", "America", "United Kingdom", "UK", "U.K.", "Britain",
            "England", "Scotland", "China", "Japan", "Germany", "France", "India", "Canada", "Brazil",
            "Italy", "Spain", "Australia", "Russia", "Mexico", "South Korea", "Korea", "Netherlands",
            "Switzerland", "Sweden", "Norway", "Denmark", "Finland", "Poland", "Ukraine", "Israel",
            "Ireland", "Singapore", "Taiwan", "Indonesia", "Nigeria", "Kenya", "Egypt", "South Africa",
            "Argentina", "Europe", "Asia", "Africa", "North America", "South America", "New York",
            "New York City", "London", "Paris", "Berlin", "Munich", "Tokyo", "Beijing", "Shanghai",
            "Shenzhen", "Hong Kong", "Seoul", "San Francisco", "Boston", "Seattle", "Los Angeles",
            "Chicago", "Austin", "Toronto", "Vancouver", "Montreal", "Sydney", "Melbourne", "Mumbai",
            "Bangalore", "Bengaluru", "Delhi", "New Delhi", "Amsterdam", "Zurich", "Geneva", "Stockholm",
            "Dublin", "Madrid", "Barcelona", "Rome", "Milan", "Vienna", "Moscow", "Dubai", "Cambridge",
            "Oxford", "Silicon Valley", "Bay Area", "California", "Texas", "Massachusetts", "Washington",
        )
    },
    # organisations
    **{
        n: "ORGANIZATION"
        for n in (
            "Google", "Alphabet", "Microsoft", "Apple", "Amazon", "Meta", "Facebook", "Nvidia", "NVIDIA",
            "OpenAI", "Anthropic", "DeepMind", "Google DeepMind", "IBM", "Intel", "AMD", "Tesla", "Netflix",
            "Oracle", "Samsung", "Huawei", "Alibaba", "Tencent", "Baidu", "Hugging Face", "GitHub",
            "Salesforce", "SAP", "Uber", "Airbnb", "Twitter", "Spotify", "Siemens", "Toyota", "NASA",
            "United Nations", "UN", "European Union", "EU", "WHO", "NATO", "FBI", "MIT", "Stanford",
            "Harvard", "Mistral AI", "Databricks", "Snowflake", "Mozilla", "Wikipedia", "Reuters",
        )
    },
    # technologies
    **{
        n: "TECHNOLOGY"
        for n in (
            "Python", "Java", "JavaScript", "TypeScript", "Rust", "Golang", "Kotlin", "Scala", "SQL",
            "DuckDB", "PostgreSQL", "Postgres", "SQLite", "MySQL", "MongoDB", "Redis", "Kafka",
            "Apache Kafka", "Spark", "Apache Spark", "Hadoop", "Kubernetes", "Docker", "Linux", "Unix",
            "PyTorch", "TensorFlow", "JAX", "NumPy", "Pandas", "Polars", "Dagster", "Airflow", "dbt",
            "React", "GraphQL", "Git", "AWS", "Azure", "GCP", "Terraform", "CUDA", "Android", "WebAssembly",
            "LLVM", "Arrow", "Apache Arrow", "Parquet",
        )
    },
    # products
    **{
        n: "PRODUCT"
        for n in (
            "iPhone", "iPad", "MacBook", "Windows", "Excel", "Gmail", "YouTube", "ChatGPT", "GPT-4",
            "GPT-4o", "Claude", "Gemini", "Llama", "Copilot", "Slack", "Photoshop", "PlayStation", "Xbox",
        )
    },
    # concepts
    **{
        n: "CONCEPT"
        for n in (
            "AI", "Artificial Intelligence", "Machine Learning", "Deep Learning", "Knowledge Graph",
            "Natural Language Processing", "NLP", "Large Language Model", "LLM", "LLMs", "RAG", "GraphRAG",
            "Quantum Computing", "Blockchain", "Cloud Computing",
        )
    },
    # events
    **{n: "EVENT" for n in ("Olympics", "World War II", "World War I", "Brexit", "NeurIPS", "CES")},
}


def _key(word: str) -> str:
    return word.lower().rstrip(".")


# --- compiled patterns -------------------------------------------------------------------------------
_UP = "A-Z\u00c0-\u00d6\u00d8-\u00de"
_SP = "[ \t\u00a0]"
_ABBR_DOT = (
    r"(?:Inc|Corp|Ltd|Co|Jr|Sr|Bros|St|Mt|Ft|Dr|Prof|Mr|Mrs|Ms|Mx|Gen|Sen|Rep|Rev|Capt|Lt|Col|Sgt"
    r"|Gov|Pres|Hon)\."
)
_CAPWORD = (
    rf"(?:{_ABBR_DOT}"
    rf"|(?:[{_UP}]\.){{2,}}"  # U.S., U.K., U.S.A.
    rf"|[{_UP}]\.(?={_SP}[{_UP}])"  # middle initial: John F. Kennedy
    rf"|[{_UP}][\w'’]*(?:[&-][{_UP}0-9][\w'’]*)*(?![\w&])"  # Sarah, DuckDB, Coca-Cola, AT&T, O'Brien
    rf"|[a-z]{{1,3}}[{_UP}][\w'’]*(?![\w&]))"  # iPhone, eBay, macOS
)
_CONN = r"(?:of|for|on|and|de|du|da|di|del|della|der|den|van|von|la|le|y|&)(?:[ \t](?:the|der|den|de|la))?"
_SPAN_RE = re.compile(
    rf"(?<![\w'’]){_CAPWORD}(?:{_SP}(?:{_CONN}{_SP})?{_CAPWORD})*(?:{_SP}(?:1[5-9]|20)\d\d(?!\w))?"
)
_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")
_NEXT_WORD_RE = re.compile(r"[ \t]+([a-z][a-z'’-]*)")
_NEXT_LOWER_RE = re.compile(r"\s+[a-z]")
_HAS_WORD_RE = re.compile(r"\w")
_SENT_END_RE = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)")
_BLOCK_MARK_RE = re.compile(r"[ \t]*(?:#{1,6}\s|[-*+•>|]\s?|\d{1,3}[.)]\s)")
_NO_BREAK_ABBR = _words(
    """dr mr mrs ms mx prof st mt ft jr sr vs e.g i.e cf fig no nos approx gen sen rep rev capt lt col
    sgt gov dept univ ca hon pres est"""
)
_SOFT_ABBR = _words("inc corp ltd co llc plc bros etc al")
_UPPER_SNAKE_RE = re.compile(r"[^0-9A-Za-z]+")

# --- attribute cues (see "Attributes" in the module docstring) ----------------------------------------
ROLE_WORDS = _words(
    """engineer scientist researcher director manager officer executive ceo cto cfo coo cio cso cmo founder
    co-founder cofounder professor lecturer lead head president vice-president vp chair chairman chairwoman
    chairperson chief developer designer analyst consultant architect programmer physicist chemist
    biologist economist mathematician statistician fellow postdoc intern partner specialist technician
    coordinator administrator editor journalist reporter correspondent dean principal employee staffer
    counsel attorney lawyer physician surgeon nurse teacher instructor advisor adviser strategist treasurer
    secretary investigator"""
)
FOUNDER_WORDS = _words("founder co-founder cofounder")
# A role or cue next to one of these is not a current fact ("former engineer at", "previously worked at").
PAST_MARKERS = _words(
    "former formerly previous previously ex ex- erstwhile onetime one-time retired late outgoing then once past had"
)
# Words after which a capitalised name can start a clause (its subject) rather than be an object.
_SUBJECT_OPENERS = (
    _words(
        """and but or nor while when whereas since after before then so because although though that
        meanwhile now today later also yesterday finally eventually recently soon once if as where
        however thus hence"""
    )
    | _REPORTING
)
_SUBJECT_PRONOUNS = _words("i he she it we they you")
_WEAK_CUES = frozenset({"fallback", "preposition"})  # typed by nothing but position: a cue may retype them

_ROLE_WORD = "(?:" + "|".join(re.escape(w) for w in sorted(ROLE_WORDS, key=len, reverse=True)) + r")(?![\w-])"
_ROLE_ONE = (
    rf"(?:[A-Za-z][\w-]*\s+){{0,3}}{_ROLE_WORD}"
    r"(?:\s+(?:of|for)\s+(?:the\s+)?[A-Za-z][\w-]*(?:\s+[a-z][\w-]*)?)?"
)
_ROLE_PHRASE = rf"(?i:{_ROLE_ONE}(?:\s+and\s+(?:(?:a|an|the)\s+)?{_ROLE_ONE})?)"
_TITLE_OPT = r"(?:(?:Dr|Prof|Mr|Mrs|Ms|Mx|Sir|Dame)\.?\s+)?"
_UPSTART = rf"(?=[{_UP}]|[a-z]{{1,3}}[{_UP}])"
_ACRONYM_OPT = r"(?:\s*\([^()]{1,20}\))?"
# Cues read right before their object mention (one finditer over the chunk); see _attribute_pass.
_CUE_RE = re.compile(
    r"\b(?=[jwehrisbmlcfCFH])(?:"  # the first-letter lookahead halves the scan time
    r"(?P<join>joined|joins|rejoined|rejoins)"
    r"|(?P<work>(?:works|working|worked)\s+(?:at|for))"
    r"|(?P<hired>(?:employed|hired|recruited)\s+by)"
    r"|(?P<copula>(?:is|serves\s+as|works\s+as|remains|became|has\s+become|was\s+named|was\s+appointed"
    r"|has\s+been\s+named|has\s+been\s+appointed)\s+(?:now\s+)?(?:(?:a|an|the|its|their)\s+)?"
    rf"(?P<crole>{_ROLE_PHRASE})\s+(?:at|of|for|with))"
    r"|(?P<hqmove>(?:moved|relocated)\s+(?:its|their)\s+(?:headquarters|HQ|head\s+office)"
    r"(?:\s+from\s+[^,.;]{1,40}?)?\s+to)"
    r"|(?P<move>(?:moved|relocated)(?:\s+back)?(?:\s+from\s+[^,.;]{1,40}?)?\s+to)"
    r"|(?P<hq>(?:headquartered|(?:headquarters|HQ|head\s+office)(?:\s+(?:is|are))?(?:\s+now)?)\s+in)"
    r"|(?P<based>based\s+in)"
    r"|(?P<lives>(?:lives|living|resides|residing)\s+in)"
    r"|(?P<founded>co-?founded|cofounded|founded)"
    r"|(?P<foundedby>(?:[Cc]o-?founded|[Cc]ofounded|[Ff]ounded)(?:\s+(?:in|on)\s+[^,.;]{1,30}?)?\s+by)"
    r"|(?P<foundedin>[Ff]ounded\s+in)"
    rf")\s+(?:the\s+)?{_TITLE_OPT}{_UPSTART}"
)
_CUE_KINDS = ("join", "work", "hired", "copula", "hqmove", "move", "hq", "based", "lives", "founded",
              "foundedby", "foundedin")
# Gaps between two mentions (fullmatch on the text between them).
_APPOS_GAP_RE = re.compile(  # PERSON, a senior engineer at ORG
    r",\s+(?:who\s+is\s+(?:now\s+|currently\s+)?)?(?:(?:a|an|the|its|their|our|his|her)\s+)?"
    rf"(?P<role>{_ROLE_PHRASE})\s+(?:at|of|for|with)\s+(?:the\s+)?"
)
_APPOS_AND_GAP_RE = re.compile(  # ... and a professor of physics at ORG2
    rf"{_ACRONYM_OPT}\s+and\s+(?:(?:a|an|the)\s+)?(?P<role>{_ROLE_PHRASE})\s+(?:at|of|for|with)\s+(?:the\s+)?"
)
_COMMA_GAP_RE = re.compile(r",\s+(?:the\s+)?")
_POSS_ROLE = (
    r"['’]s\s+(?:(?:new|current|longtime|long-time)\s+)?"
    rf"(?P<role>(?i:(?:[A-Za-z][\w-]*\s+){{0,3}}{_ROLE_WORD}))"
)
_POSS_ROLE_RE = re.compile(rf"{_POSS_ROLE}(?=\s*(?:[,;:.)—–]|$))")  # PERSON, ORG's chief technology officer,
_POSS_TO_PERSON_RE = re.compile(rf"{_POSS_ROLE}\s*,?\s+{_TITLE_OPT}")  # ORG's CTO, PERSON
_ORG_ROLE_PERSON_RE = re.compile(  # Northwind chief executive Diane Holloway / Google CEO Sundar Pichai
    rf"\s+(?P<role>(?:[a-z][\w-]*\s+){{0,2}}(?:{_ROLE_WORD}|CEO|CTO|CFO|COO|CIO))\s+{_TITLE_OPT}"
)
_OF_GAP_RE = re.compile(r"\s+of\s+(?:the\s+)?")
_COORD_GAP_RE = re.compile(rf"\s*(?:,\s*(?:and\s+)?|and\s+){_TITLE_OPT}")
_RELATIVE_RE = re.compile(r"\s*,?\s*(?:who|which|that)\b")
_WHO_RE = re.compile(r"\s*,\s*who\b")
_AS_ROLE_RE = re.compile(
    rf"{_ACRONYM_OPT},?\s+as\s+(?:(?:a|an|the|its|their|our|his|her)\s+)?"
    rf"(?P<role>[{_UP}][\w&-]*(?:\s+(?:(?:of|for|and|&)\s+)?[{_UP}][\w&-]*){{0,5}}|(?i:{_ROLE_ONE}))"
)
_IN_AFTER_RE = re.compile(r",?\s+in\s+(?:the\s+)?")
_BASED_GAP_RE = re.compile(
    rf"{_ACRONYM_OPT}\s*(?:,\s*(?:(?:who|which)\s+)?)?(?:(?:is|are|remains|has\s+been)\s+)?"
    r"(?:(?:now|currently|still|also)\s+)?"
)
_FOUNDED_GAP_RE = re.compile(
    rf"{_ACRONYM_OPT}(?:\s*,\s*(?:a|an|the)\s+[^,;()]{{1,60}}?\s+|\s*,?\s*(?:(?:which|that)\s+)?"
    r"(?:(?:was|were|is|had\s+been|has\s+been)\s+)?(?:(?:originally|initially|jointly|first)\s+)?)"
)
# A sentence-initial single word followed by one of these is an organisation subject, not noise.
_HQ_SUBJECT_RE = re.compile(
    r"\s+(?:(?:is|was)\s+(?:now\s+|currently\s+)?headquartered\s+in|(?:moved|relocated)\s+(?:its|their)\s+"
    r"(?:headquarters|HQ|head\s+office))\b"
)
_LAST_TOKEN_RE = re.compile(r"([\w.'’-]+)\s*\Z")
_NAME_TOKEN_RE = re.compile(rf"[{_UP}][a-z\u00df-\u00ff]+(?:['’-][{_UP}]?[a-z\u00df-\u00ff]+)?")


def _blocks(text: str) -> list[tuple[int, int]]:
    """Paragraph-like blocks: split at blank lines, headings, list items, quotes and table rows."""
    blocks: list[tuple[int, int]] = []
    start = -1
    end = 0
    pos = 0
    prev_was_marker = False
    for line in text.split("\n"):
        ls, le = pos, pos + len(line)
        pos = le + 1
        if not line.strip():
            if start >= 0:
                blocks.append((start, end))
                start = -1
            prev_was_marker = False
            continue
        marker = _BLOCK_MARK_RE.match(line) is not None
        if start >= 0 and (marker or prev_was_marker):
            blocks.append((start, end))
            start = -1
        if start < 0:
            start = ls
        end = le
        stripped = line.lstrip()
        prev_was_marker = stripped.startswith(("#", "|"))
    if start >= 0:
        blocks.append((start, end))
    return blocks


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence (start, end) offsets into ``text``, trimmed of surrounding whitespace."""
    out: list[tuple[int, int]] = []
    for bs, be in _blocks(text):
        s = bs
        for m in _SENT_END_RE.finditer(text, bs, be):
            p = m.start()
            if text[p] == "." and m.group().count(".") == 1:
                j = p
                while j > bs and (text[j - 1].isalnum() or text[j - 1] == "."):
                    j -= 1
                word = text[j:p]
                key = word.lower()
                if _NEXT_LOWER_RE.match(text, m.end(), be) is not None:
                    continue  # a lowercase word never starts a sentence
                if key in _NO_BREAK_ABBR or (len(word) == 1 and word.isupper()):
                    continue
                if key in _SOFT_ABBR or ("." in word and word[:1].isalpha()):
                    rest = m.end()
                    while rest < be and text[rest].isspace():
                        rest += 1
                    after = _WORD_RE.match(text, rest, be)
                    if after is None or after.group().lower() not in STOPWORDS:
                        continue
            e = m.end()
            if text[s:e].strip():
                out.append((s, e))
            s = e
        if s < be and text[s:be].strip():
            out.append((s, be))
    trimmed = []
    for s, e in out:
        seg = text[s:e]
        ls = len(seg) - len(seg.lstrip())
        rs = len(seg) - len(seg.rstrip())
        trimmed.append((s + ls, e - rs))
    return trimmed


class _Span:
    __slots__ = (
        "start", "end", "name", "words", "honor", "year", "prev1", "prev2",
        "sent", "initial", "modifier", "etype", "conf", "cue", "has_conn",
    )

    def __init__(self) -> None:
        self.honor = False
        self.year = False
        self.prev1: str | None = None
        self.prev2: str | None = None
        self.initial = False
        self.modifier = False
        self.has_conn = False


class HeuristicExtractor:
    """Rule-based extractor; see the module docstring for the rules and their limits."""

    name = "heuristic"
    # 2: attribute observations, cue-based retyping of weak mentions; 3: ids from the shared row builder
    code_version = "heuristic-3"

    def __init__(
        self,
        entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES,
        gazetteer: dict[str, str] | None = None,
    ) -> None:
        self.entity_types = tuple(t.upper() for t in entity_types)
        self._allowed = frozenset(self.entity_types)
        self._gazetteer: dict[str, str] = {_key(k): v.upper() for k, v in BUILTIN_GAZETTEER.items()}
        if gazetteer:
            self._gazetteer.update({_key(k): v.upper() for k, v in gazetteer.items()})
        self._decomp_cache: dict[str, tuple[tuple, ...]] = {}
        # The types and the gazetteer change what is found, so they are part of the version.
        self.version = f"{self.code_version}/{settings_digest(entity_types=self.entity_types, gazetteer=gazetteer or {})}"

    # --- public ----------------------------------------------------------------------------------
    def extract(self, chunks: pl.DataFrame) -> ExtractionResult:
        n = chunks.height

        def column(name: str) -> list:
            return chunks.get_column(name).to_list() if name in chunks.columns else [None] * n

        records = []
        for cid, did, text, chunk_hash in zip(column("chunk_id"), column("document_id"), column("text"),
                                              column("content_hash")):
            chunk = ChunkRecords(cid, did, chunk_hash)
            try:
                chunk.mentions, chunk.relations, chunk.observations = self._extract_text(text)
            except Exception as exc:  # one bad chunk never fails the batch
                chunk.error = f"{type(exc).__name__}: {exc}"
            records.append(chunk)
        return build_rows(records, extractor=self.name, extractor_version=self.version)

    # --- one chunk ---------------------------------------------------------------------------------
    def _extract_text(self, text: object) -> tuple[list[tuple], list[tuple], list[tuple]]:
        """Mentions (start, end, name, type, conf, description), relation and attribute candidates.

        Relation candidates are (source idx, target idx, type, keywords, description, strength) and
        attribute candidates (subject idx, attr_key, value, confidence), indices into the mention list.
        """
        if not isinstance(text, str):
            raise TypeError(f"chunk text must be a string, got {type(text).__name__}")
        if not text.strip():
            return [], [], []
        sentences = split_sentences(text)
        if not sentences:
            return [], [], []
        sent_starts = [s for s, _ in sentences]
        spans = self._spans(text, sentences, sent_starts)
        if not spans:
            return [], [], []
        self._resolve_in_chunk(text, spans)
        attributes = self._attributes(text, spans, sentences)  # may retype weak mentions: before mentions

        desc_cache: dict[int, str] = {}

        def sentence_text(idx: int) -> str:
            d = desc_cache.get(idx)
            if d is None:
                s, e = sentences[idx]
                d = " ".join(text[s:e].split())[:MAX_DESCRIPTION]
                desc_cache[idx] = d
            return d

        mentions = [MentionRecord(sp.name, sp.etype, sentence_text(sp.sent), sp.conf, sp.start, sp.end) for sp in spans]
        relations = [RelationRecord(*r) for r in self._relations(text, spans, sentence_text)]
        return mentions, relations, [ObservationRecord(*a) for a in attributes]

    def _decompose(self, group: str) -> tuple[tuple, ...]:
        """Split one capitalised-span match into name sub-spans (cached: surface strings repeat a lot).

        Each sub-span is (rel_start, rel_end, words, honorific, year, prev1, prev2, first_in_match,
        has_of, base_type) with offsets relative to the match and base_type the context-free type cue
        (None when only the words around the match can decide).
        """
        cached = self._decomp_cache.get(group)
        if cached is not None:
            return cached
        # tokens are separated by exactly one blank character, so a plain split keeps exact offsets
        toks: list[tuple[int, int, str]] = []
        pos = 0
        for w in group.replace("\t", " ").replace("\u00a0", " ").split(" "):
            toks.append((pos, pos + len(w), w))
            pos += len(w) + 1
        cur: list[tuple[int, int, str]] = []
        pending: list[str] = []
        honor_pending = False
        cur_honor = False
        cur_has_of = False
        prev_word: str | None = None  # lowercase previous token inside the match
        prev_prev: str | None = None
        cur_prev: tuple[str | None, str | None] = (None, None)
        cur_first = False
        year = False
        subs: list[tuple[list, bool, bool, tuple, bool, bool]] = []

        def flush() -> None:
            nonlocal cur, year, cur_has_of
            if cur:
                subs.append((cur, cur_honor, year, cur_prev, cur_first, cur_has_of))
            cur = []
            year = False
            cur_has_of = False

        for ti, (ts, te, w) in enumerate(toks):
            lw = w.lower()
            if lw in CONNECTORS and not w[0].isupper():
                if cur:
                    pending.append(lw)
                else:
                    honor_pending = False
                prev_prev, prev_word = prev_word, lw
                continue
            if w.isdigit():  # trailing year
                if cur and not pending:
                    cur.append((ts, te, w))
                    year = True
                flush()
                pending = []
                prev_prev, prev_word = prev_word, lw
                continue
            key = lw.rstrip(".")
            if key in TITLES_ANYWHERE or (key in HONORIFICS and not cur):
                flush()
                pending = []
                honor_pending = ti + 1 < len(toks) and toks[ti + 1][2][0].isupper()
                prev_prev, prev_word = prev_word, lw
                continue
            if lw in STOPWORDS and not (w.isupper() and len(w) > 1):
                flush()
                pending = []
                honor_pending = False
                prev_prev, prev_word = prev_word, lw
                continue
            # possessive / trailing apostrophe
            possessive = False
            if lw.endswith(("'s", "’s")) and len(w) > 2:
                te -= 2
                w = w[:-2]
                possessive = True
            while w and w[-1] in "'’":
                te -= 1
                w = w[:-1]
                possessive = True
            if not w:
                flush()
                pending = []
                continue
            if cur and pending:
                if self._keep_connector(cur, pending, w, cur_has_of):
                    if pending[0] in ("of", "for", "on"):
                        cur_has_of = True
                else:
                    flush()
            pending = []
            if not cur:
                cur_honor = honor_pending
                cur_prev = (prev_word, prev_prev)
                cur_first = ti == 0
                honor_pending = False
            cur.append((ts, te, w))
            prev_prev, prev_word = prev_word, lw
            if possessive:
                flush()
        flush()

        out = []
        for toks_, honor, has_year, (p1, p2), first_in_match, has_of in subs:
            start = toks_[0][0]
            end = toks_[-1][1]
            name = group[start:end]
            if len(name) < 2 or name.isdigit():
                continue
            name_toks = toks_[:-1] if has_year else toks_
            words = tuple(_key(t[2]) for t in name_toks if t[2] not in CONNECTORS)
            if not words or all(wd in MONTHS for wd in words):
                continue
            base = self._own_type(name, words, honor, has_year, has_of)
            out.append((start, end, words, honor, has_year, p1, p2, first_in_match, has_of, base))
        result = tuple(out)
        if len(self._decomp_cache) >= _CACHE_LIMIT:
            self._decomp_cache.clear()
        self._decomp_cache[group] = result
        return result

    def _spans(self, text: str, sentences: list[tuple[int, int]], sent_starts: list[int]) -> list[_Span]:
        spans: list[_Span] = []
        for m in _SPAN_RE.finditer(text):
            ms = m.start()
            for sub in self._decompose(m.group()):
                rs, re_, words, honor, has_year, p1, p2, first_in_match, has_of, base = sub
                start = ms + rs
                end = ms + re_
                sp = _Span()
                sp.start, sp.end, sp.name = start, end, text[start:end]
                sp.words = words
                sp.honor = honor
                sp.year = has_year
                sp.has_conn = has_of
                sent = bisect_right(sent_starts, start) - 1
                if sent < 0:
                    sent = 0
                sp.sent = sent
                if first_in_match:
                    ss = sentences[sent][0]
                    before = text[max(ss, start - 40):start]
                    if not before:
                        p1 = p2 = None
                    elif not before[-1].isspace():
                        p1, p2 = before[-1], None  # glued to punctuation, e.g. "(QDL" or "“Boston"
                    else:
                        parts = before.split()
                        p1 = parts[-1].lower() if parts else None
                        p2 = parts[-2].lower() if len(parts) > 1 else None
                    sp.initial = _HAS_WORD_RE.search(text, ss, start) is None
                sp.prev1, sp.prev2 = p1, p2
                # attributive use: "the AI team", "Boston-based"
                if text[end:end + 1] == "-" and text[end + 1:end + 2].islower():
                    sp.modifier = True
                elif p1 in DETERMINERS:
                    nm = _NEXT_WORD_RE.match(text, end)
                    if nm is not None:
                        nw = nm.group(1)
                        if (
                            nw not in FUNCTION_WORDS
                            and nw not in VERB_FORMS
                            and nw not in _REPORTING
                            and not (len(nw) >= 5 and nw.endswith("ed"))
                        ):
                            sp.modifier = True
                if base is not None:
                    sp.etype, sp.conf, sp.cue = base
                elif p1 in PLACE_PREPOSITIONS and p2 not in NOT_PLACE_BEFORE_PREP:
                    sp.etype, sp.conf, sp.cue = "LOCATION", CONF_PREPOSITION, "preposition"
                else:
                    sp.etype, sp.conf, sp.cue = "OTHER", CONF_FALLBACK, "fallback"
                spans.append(sp)
        return spans

    def _keep_connector(self, cur: list, pending: list[str], right: str, has_of: bool) -> bool:
        first = pending[0]
        if first in PARTICLES or first == "&":
            return True
        last = _key(cur[-1][2])
        if first in ("of", "for", "on"):
            if last in HEAD_TYPES:
                return True
            return (
                first == "of"
                and len(cur) == 1
                and last not in GIVEN_NAMES
                and _key(right) not in self._gazetteer
            )
        if first == "and":
            return has_of and _key(right) not in self._gazetteer
        return False

    def _own_type(
        self, name: str, words: tuple[str, ...], honor: bool, year: bool, has_of: bool
    ) -> tuple[str, float, str] | None:
        """Rules 1-6 of the module docstring; None leaves it to the preposition cue or the fallback."""
        head = None
        if len(words) >= 2:
            for wd in reversed(words):
                ht = HEAD_TYPES.get(wd)
                if ht is not None:
                    head = ht
                    break
        if honor:
            if head is not None and head[0] == "ORGANIZATION":
                return head[0], head[1], "head"
            return "PERSON", CONF_HONORIFIC, "honorific"
        g = self._gazetteer.get(_key(name))
        if g is not None:
            return g, CONF_GAZETTEER, "gazetteer"
        if head is not None:
            return head[0], head[1], "head"
        if 2 <= len(words) <= 4 and words[0] in GIVEN_NAMES and not has_of and not year:
            return "PERSON", CONF_GIVEN_NAME, "given_name"
        if len(words) == 1 and words[0] in GIVEN_NAMES:
            return "PERSON", CONF_SINGLE_GIVEN, "given_name"
        if year:
            return "EVENT", CONF_YEAR_EVENT, "year"
        return None

    def _resolve_in_chunk(self, text: str, spans: list[_Span]) -> None:
        # acronym in parentheses right after a span takes that span's type
        for k in range(1, len(spans)):
            sp = spans[k]
            w = sp.name
            if (
                len(sp.words) == 1
                and w.isupper()
                and text[sp.start - 1:sp.start] == "("
                and text[sp.end:sp.end + 1] == ")"
            ):
                prev = spans[k - 1]
                if not text[prev.end:sp.start - 1].strip():
                    sp.modifier = True  # an alias of the span before it, not a relation endpoint there
                    if sp.conf < STRONG:
                        sp.etype, sp.conf, sp.cue = prev.etype, max(prev.conf, CONF_CHUNK_CONTEXT), "acronym"
        # same exact name typed strongly elsewhere in the chunk
        strong: dict[str, tuple[str, float]] = {}
        for sp in spans:
            if sp.conf >= STRONG:
                cur = strong.get(sp.name)
                if cur is None or sp.conf > cur[1]:
                    strong[sp.name] = (sp.etype, sp.conf)
        person_last: dict[str, int] = {}  # last word of a PERSON span -> first offset seen
        for sp in spans:
            if sp.conf < STRONG:
                hit = strong.get(sp.name)
                if hit is not None:
                    sp.etype, sp.conf, sp.cue = hit[0], CONF_CHUNK_CONTEXT, "same_name"
            if sp.etype == "PERSON" and len(sp.words) >= 2:
                last = sp.name.rsplit(None, 1)[-1]
                person_last.setdefault(last, sp.start)
        if person_last:
            for sp in spans:
                if (
                    len(sp.words) == 1
                    and sp.cue not in ("honorific", "acronym")
                    and sp.etype != "PERSON"
                    and person_last.get(sp.name, sp.start) < sp.start
                ):
                    sp.etype, sp.conf, sp.cue = "PERSON", CONF_CHUNK_CONTEXT, "surname"
        # sentence-initial single words with no cue need support elsewhere in the chunk
        if any(sp.initial and sp.cue == "fallback" and len(sp.words) == 1 for sp in spans):
            mid = {sp.name for sp in spans if not sp.initial}
            spans[:] = [
                sp
                for sp in spans
                if not (
                    sp.initial
                    and sp.cue == "fallback"
                    and len(sp.words) == 1
                    and sp.name not in mid
                    and _HQ_SUBJECT_RE.match(text, sp.end) is None  # "Northwind is headquartered in ..."
                )
            ]
        allowed = self._allowed
        if any(sp.etype not in allowed for sp in spans):
            keep = []
            for sp in spans:
                if sp.etype not in allowed:
                    if "OTHER" not in allowed:
                        continue
                    sp.etype = "OTHER"
                keep.append(sp)
            spans[:] = keep

    # --- attributes ----------------------------------------------------------------------------
    def _attributes(self, text: str, spans: list[_Span], sentences: list[tuple[int, int]]) -> list[tuple]:
        """Attribute candidates (subject span idx, attr_key, value, confidence) of one chunk.

        A cue may retype a weakly typed mention (see the module docstring); when that happened the chunk
        is read once more so every cue sees the final types.
        """
        if len(spans) < 2:
            return []
        by_start = {sp.start: k for k, sp in enumerate(spans)}
        cues = []  # (match, object span idx): cue matches do not depend on types, read them once
        for m in _CUE_RE.finditer(text):
            obj = by_start.get(m.end())
            if obj is not None:
                cues.append((m, obj))
        retyped: list[bool] = [False]
        out = self._attribute_pass(text, spans, sentences, cues, by_start, retyped)
        if retyped[0]:
            out = self._attribute_pass(text, spans, sentences, cues, by_start, retyped)
        return out

    def _attribute_pass(
        self,
        text: str,
        spans: list[_Span],
        sentences: list[tuple[int, int]],
        cues: list[tuple[re.Match, int]],
        by_start: dict[int, int],
        retyped: list[bool],
    ) -> list[tuple]:
        out: list[tuple] = []
        n = len(spans)
        allowed = self._allowed
        gazetteer = self._gazetteer

        # acronyms defined in this chunk ("Quantum Dynamics Lab (QDL)") resolve to the full name in values
        full_name: dict[str, str] = {}
        for k in range(1, n):
            sp, prev = spans[k], spans[k - 1]
            if (
                len(sp.words) == 1
                and sp.name.isupper()
                and text[sp.start - 1:sp.start] == "("
                and text[sp.end:sp.end + 1] == ")"
                and not text[prev.end:sp.start - 1].strip()
                and "".join(w[0] for w in prev.name.split() if w[:1].isupper()) == sp.name
            ):
                full_name.setdefault(sp.name, prev.name)

        def value_of(k: int) -> str:
            name = spans[k].name
            return full_name.get(name, name)

        def weak(sp: _Span) -> bool:
            return sp.cue in _WEAK_CUES and sp.conf < STRONG

        def name_like(sp: _Span) -> bool:
            """Two or three plain Titlecase words, none a known place/company, head or role word."""
            toks = sp.name.split()
            return 2 <= len(toks) <= 3 and all(
                _NAME_TOKEN_RE.fullmatch(t) is not None
                and _key(t) not in gazetteer
                and _key(t) not in HEAD_TYPES
                and _key(t) not in ROLE_WORDS
                for t in toks
            )

        def fits(k: int, etype: str, can_retype: bool | str) -> bool:
            """``can_retype``: True lets any weak mention take ``etype``, "name" only a name-like one."""
            sp = spans[k]
            if sp.etype == etype:
                return True
            if etype not in allowed or not weak(sp):
                return False
            return can_retype is True or (can_retype == "name" and name_like(sp))

        def settle(k: int, etype: str) -> None:
            """Give a weak mention the type its cue implies, with every weak mention of the same name."""
            sp = spans[k]
            if sp.etype == etype:
                return
            retyped[0] = True
            name = sp.name
            last = name.rsplit(None, 1)[-1] if etype == "PERSON" and len(sp.words) > 1 else None
            for other in spans:
                if other.name == name and (other is sp or weak(other)):
                    other.etype, other.conf, other.cue = etype, CONF_CONTEXT, "context"
                elif last is not None and other.name == last and other.start > sp.start and weak(other):
                    other.etype, other.conf, other.cue = "PERSON", CONF_CONTEXT, "surname"

        def emit(subj: int, key: str, value: str, conf: float) -> None:
            value = " ".join(value.split())
            if value and value.casefold() != spans[subj].name.casefold():
                out.append((subj, key, value, conf))

        def emit_role(subjects: list[int], org: int, role: str | None, conf: float) -> None:
            """employer (+ role, + founder when the role says so) for each subject."""
            for s in subjects:
                emit(s, "employer", value_of(org), conf)
                if role:
                    emit(s, "role", role, conf)
            if role and FOUNDER_WORDS.intersection(role.lower().split()):
                for s in subjects:
                    emit(org, "founder", spans[s].name, conf)

        def sentence_start(k: int) -> int:
            return sentences[spans[k].sent][0]

        def next_spans(k: int, limit: int = 3, max_gap: int = 120):
            """Up to ``limit`` non-modifier spans after ``k`` in its sentence, within ``max_gap`` chars."""
            sent = spans[k].sent
            j = k + 1
            found = 0
            while j < n and found < limit and spans[j].sent == sent and spans[j].start - spans[k].end <= max_gap:
                if not spans[j].modifier:
                    found += 1
                    yield j
                j += 1

        def subject_position(sent_start: int, start: int) -> bool:
            pos = start
            for _ in range(4):
                before = text[sent_start:pos]
                if not before.strip():
                    return True
                m = _LAST_TOKEN_RE.search(before)
                if m is None:
                    return True  # punctuation: a clause or list starts here
                tok = m.group(1)
                low = tok.lower().rstrip(".")
                if low in HONORIFICS or low in ROLE_WORDS:
                    pos = sent_start + m.start(1)  # "CEO Diane Holloway", "engineer Marcus Webb"
                    continue
                if low in _SUBJECT_OPENERS:
                    return True
                return tok[:1].isupper() and low not in FUNCTION_WORDS
            return False

        def clause_subject(obj: int, cue_start: int, wants: dict[str, bool | str]) -> tuple[list[int], str | None]:
            """The subject of the clause a cue belongs to: the nearest mention before the cue that starts
            a clause (or is followed by who/which/that), with its coordinated partners ("A and B joined").
            ``wants`` maps acceptable types to whether a weak mention may be retyped to it."""
            sent = spans[obj].sent
            ss = sentences[sent][0]
            k = obj - 1
            while k >= 0 and spans[k].sent == sent:
                sp = spans[k]
                if sp.end > cue_start or sp.modifier:
                    k -= 1
                    continue
                for w in _WORD_RE.findall(text, sp.end, cue_start):
                    if w.lower() in _SUBJECT_PRONOUNS:
                        return [], None  # the clause has its own (pronoun) subject
                rel = _RELATIVE_RE.match(text, sp.end) is not None
                if rel or subject_position(ss, sp.start):
                    etype = next((t for t, r in wants.items() if fits(k, t, r)), None)
                    if etype is None:
                        return [], None
                    group = [k]
                    if not rel:
                        head = k
                        j = k - 1
                        while j >= 0 and spans[j].sent == sent:
                            sj = spans[j]
                            if sj.modifier:
                                j -= 1
                                continue
                            if sj.etype == etype and _COORD_GAP_RE.fullmatch(text, sj.end, spans[head].start):
                                group.append(j)
                                head = j
                                j -= 1
                                continue
                            break
                        if len(group) > 1 and not subject_position(ss, spans[head].start):
                            group = [k]
                    return group, etype
                k -= 1
            return [], None

        def adjacent_subject(obj: int, cue_start: int, gap_re: re.Pattern, back: int = 3) -> int | None:
            sent = spans[obj].sent
            k = obj - 1
            tried = 0
            while k >= 0 and spans[k].sent == sent and tried < back:
                sp = spans[k]
                if sp.end > cue_start or sp.modifier:
                    k -= 1
                    continue
                if gap_re.fullmatch(text, sp.end, cue_start):
                    return k
                tried += 1
                k -= 1
            return None

        def org_is_role(k: int) -> bool:
            """A weak span made of role words ("Chief", "Senior Engineer") is a title, not an employer."""
            sp = spans[k]
            return weak(sp) and any(w in ROLE_WORDS for w in sp.words)

        def prev_word(k: int, pos: int) -> str:
            m = _LAST_TOKEN_RE.search(text, sentence_start(k), pos)
            return m.group(1).lower() if m else ""

        def role_ok(role: str | None) -> str | None:
            if not role:
                return None
            words = role.lower().split()
            if any(w in PAST_MARKERS for w in words) or not any(w in ROLE_WORDS for w in words):
                return None
            for w in words:
                if w in ROLE_WORDS:
                    break
                if w in FUNCTION_WORDS:
                    return None
            return " ".join(role.split())

        # 1) cues right before their object
        for m, obj in cues:
            o = spans[obj]
            if o.modifier or m.start() < sentence_start(obj):
                continue
            kind = next(k for k in _CUE_KINDS if m.group(k) is not None)
            cs = m.start()
            if kind == "join":
                role_m = _AS_ROLE_RE.match(text, o.end)
                role = role_ok(role_m.group("role")) if role_m else None
                if not fits(obj, "ORGANIZATION", role is not None or (len(o.words) == 1 and o.name.isupper())):
                    continue
                subj, _ = clause_subject(obj, cs, {"PERSON": True if role is not None else "name"})
                if subj:
                    settle(obj, "ORGANIZATION")
                    for s in subj:
                        settle(s, "PERSON")
                    emit_role(subj, obj, role, CONF_ATTR_VERB)
            elif kind in ("work", "hired"):
                before = prev_word(obj, cs)
                if before in PAST_MARKERS or before in ("never", "longer"):
                    continue
                conf = CONF_ATTR_VERB
                work = m.group("work")
                if work is not None and work.startswith("worked") and before not in ("has", "have"):
                    conf = CONF_ATTR_WEAK  # simple past: maybe not current
                if not fits(obj, "ORGANIZATION", True):
                    continue
                subj, _ = clause_subject(obj, cs, {"PERSON": True if kind == "work" else "name"})
                if subj:
                    settle(obj, "ORGANIZATION")
                    for s in subj:
                        settle(s, "PERSON")
                    emit_role(subj, obj, None, conf)
            elif kind == "copula":
                role = role_ok(m.group("crole"))
                if role is None or not fits(obj, "ORGANIZATION", True):
                    continue
                subj, _ = clause_subject(obj, cs, {"PERSON": True})
                if subj:
                    settle(obj, "ORGANIZATION")
                    for s in subj:
                        settle(s, "PERSON")
                    emit_role(subj, obj, role, CONF_ATTR_COPULA)
            elif kind in ("hqmove", "hq"):
                if o.etype != "LOCATION":
                    continue
                before = prev_word(obj, cs)
                if before in PAST_MARKERS or before in ("was", "were", "old", "original"):
                    continue
                subj, _ = clause_subject(obj, cs, {"ORGANIZATION": True})
                explicit = kind == "hqmove" or m.group("hq").startswith("headquartered")
                conf = CONF_ATTR_VERB if explicit else CONF_ATTR_APPOSITIVE
                for s in subj:
                    settle(s, "ORGANIZATION")
                    emit(s, "headquarters", value_of(obj), conf)
            elif kind == "move":
                if o.etype not in ("ORGANIZATION", "LOCATION"):
                    continue
                wants: dict[str, bool | str] = {"PERSON": "name"}
                if o.etype == "LOCATION":
                    wants["ORGANIZATION"] = False
                subj, stype = clause_subject(obj, cs, wants)
                for s in subj:
                    settle(s, "PERSON" if stype == "PERSON" else spans[s].etype)
                    if o.etype == "ORGANIZATION":
                        emit(s, "employer", value_of(obj), CONF_ATTR_APPOSITIVE)
                    elif stype == "PERSON":
                        emit(s, "located_in", value_of(obj), CONF_ATTR_VERB)
                    else:
                        emit(s, "headquarters", value_of(obj), CONF_ATTR_WEAK)
            elif kind == "based":
                if o.etype != "LOCATION":
                    continue
                s = adjacent_subject(obj, cs, _BASED_GAP_RE, back=1)
                if s is not None and spans[s].etype == "PERSON":
                    emit(s, "located_in", value_of(obj), CONF_ATTR_APPOSITIVE)
                elif s is not None and spans[s].etype == "ORGANIZATION":
                    emit(s, "headquarters", value_of(obj), CONF_ATTR_APPOSITIVE)
            elif kind == "lives":
                if o.etype != "LOCATION":
                    continue
                subj, _ = clause_subject(obj, cs, {"PERSON": True})
                for s in subj:
                    settle(s, "PERSON")
                    emit(s, "located_in", value_of(obj), CONF_ATTR_VERB)
            elif kind == "founded":
                if not fits(obj, "ORGANIZATION", True):
                    continue
                subj, _ = clause_subject(obj, cs, {"PERSON": False})
                if not subj:
                    continue
                settle(obj, "ORGANIZATION")
                for s in subj:
                    emit(obj, "founder", spans[s].name, CONF_ATTR_VERB)
                im = _IN_AFTER_RE.match(text, o.end)
                loc = by_start.get(im.end()) if im else None
                if loc is not None and spans[loc].etype == "LOCATION":
                    emit(obj, "founded_in", value_of(loc), CONF_ATTR_APPOSITIVE)
            elif kind == "foundedby":
                if not fits(obj, "PERSON", 2 <= len(o.words) <= 4):  # "founded by Alan Okafor": a person
                    continue
                org = adjacent_subject(obj, cs, _FOUNDED_GAP_RE)
                if org is None and not text[sentence_start(obj):cs].strip(" \t\n\"'“‘(-—–*#>"):
                    # "Founded in 2014 by Alan Okafor, QDL develops ..."
                    org = next(
                        (j for j in next_spans(obj, 1) if _COMMA_GAP_RE.fullmatch(text, o.end, spans[j].start)), None
                    )
                if org is None or not fits(org, "ORGANIZATION", True):
                    continue
                settle(org, "ORGANIZATION")
                settle(obj, "PERSON")
                emit(org, "founder", o.name, CONF_ATTR_VERB)
                im = _IN_AFTER_RE.match(text, o.end)
                loc = by_start.get(im.end()) if im else None
                if loc is not None and spans[loc].etype == "LOCATION":
                    emit(org, "founded_in", value_of(loc), CONF_ATTR_APPOSITIVE)
            elif kind == "foundedin":
                if o.etype != "LOCATION":
                    continue
                org = adjacent_subject(obj, cs, _FOUNDED_GAP_RE)
                if org is not None and fits(org, "ORGANIZATION", True):
                    settle(org, "ORGANIZATION")
                    emit(org, "founded_in", value_of(obj), CONF_ATTR_APPOSITIVE)

        # 2) cues right after their subject: appositives, possessives, "X of ORG", "X, who"
        for k in range(n):
            sp = spans[k]
            if sp.modifier:
                continue
            after = text[sp.end:sp.end + 4]
            comma = after[:1] == ","
            if (comma or after == " of ") and fits(k, "PERSON", True):
                for j in next_spans(k):
                    am = _APPOS_GAP_RE.fullmatch(text, sp.end, spans[j].start)
                    if am is None:
                        continue
                    role = role_ok(am.group("role"))
                    if role is None or not fits(j, "ORGANIZATION", True):
                        break
                    settle(k, "PERSON")
                    settle(j, "ORGANIZATION")
                    emit_role([k], j, role, CONF_ATTR_APPOSITIVE)
                    # "..., director of QDL and a professor of physics at MIT"
                    for j2 in next_spans(j, 2):
                        bm = _APPOS_AND_GAP_RE.fullmatch(text, spans[j].end, spans[j2].start)
                        if bm is not None:
                            role2 = role_ok(bm.group("role"))
                            if role2 is not None and fits(j2, "ORGANIZATION", True):
                                settle(j2, "ORGANIZATION")
                                emit_role([k], j2, role2, CONF_ATTR_APPOSITIVE)
                            break
                    break
                else:
                    j = next(next_spans(k, 1), None)
                    if j is not None and _COMMA_GAP_RE.fullmatch(text, sp.end, spans[j].start):
                        # "Marcus Webb, QDL's chief technology officer, built ..."
                        pm = _POSS_ROLE_RE.match(text, spans[j].end)
                        role = role_ok(pm.group("role")) if pm else None
                        if role and fits(j, "ORGANIZATION", True) and not org_is_role(j):
                            settle(k, "PERSON")
                            settle(j, "ORGANIZATION")
                            emit_role([k], j, role, CONF_ATTR_APPOSITIVE)
                    elif (
                        j is not None
                        and sp.etype == "PERSON"
                        and spans[j].etype == "ORGANIZATION"
                        and _OF_GAP_RE.fullmatch(text, sp.end, spans[j].start)
                    ):
                        emit_role([k], j, None, CONF_ATTR_WEAK)  # "Dr. Sarah Chen of the Quantum Dynamics Lab"
                if comma and weak(sp) and "PERSON" in allowed and _WHO_RE.match(text, sp.end):
                    settle(k, "PERSON")  # "Lena Ortiz, who leads user support"
            if after and after[0] in "'’ " and fits(k, "ORGANIZATION", True) and not org_is_role(k):
                # "QDL's CTO, Marcus Webb", "Lumen's chief technology officer, Daniel Osei",
                # "Northwind chief executive Diane Holloway"
                j = next(next_spans(k, 1), None)
                if j is not None and fits(j, "PERSON", True):
                    pm = _POSS_TO_PERSON_RE.fullmatch(text, sp.end, spans[j].start) or _ORG_ROLE_PERSON_RE.fullmatch(
                        text, sp.end, spans[j].start
                    )
                    role = role_ok(pm.group("role")) if pm else None
                    if role:
                        settle(k, "ORGANIZATION")
                        settle(j, "PERSON")
                        emit_role([j], k, role, CONF_ATTR_APPOSITIVE)
        return out

    @staticmethod
    def _relations(text: str, spans: list[_Span], sentence_text) -> list[tuple]:
        out: list[tuple] = []
        k = 0
        n = len(spans)
        while k < n:
            sent = spans[k].sent
            endpoints: list[int] = []
            while k < n and spans[k].sent == sent:
                if not spans[k].modifier:
                    endpoints.append(k)
                k += 1
            pairs = 0
            for a, b in zip(endpoints, endpoints[1:]):
                if pairs >= MAX_PAIRS_PER_SENTENCE:
                    break
                sa, sb = spans[a], spans[b]
                if sa.etype == sb.etype and sa.name == sb.name:
                    continue
                words = _WORD_RE.findall(text, sa.end, sb.start)
                rtype = None
                if len(words) <= MAX_VERB_GAP:
                    for i, w in enumerate(words):
                        if w[0].isupper():
                            continue
                        lw = w.lower()
                        if lw in FUNCTION_WORDS:
                            continue
                        if (
                            lw in VERB_FORMS
                            or (len(lw) >= 5 and lw.endswith("ed") and lw not in _NOT_VERBS_ED)
                            or (lw in _VERB_BASES and i > 0 and words[i - 1].lower() in _BASE_AFTER)
                        ):
                            rtype = lw
                            if i + 1 < len(words) and words[i + 1].lower() in RELATION_PREPOSITIONS:
                                rtype += "_" + words[i + 1].lower()
                            break
                lowered = [w.lower() for w in words]
                kws = [lw for lw in lowered if lw not in FUNCTION_WORDS and lw not in HONORIFICS]
                kws = kws[:MAX_KEYWORDS]
                keywords = " ".join(kws) if kws else None
                if rtype is None:
                    relation_type, strength = "RELATED_TO", STRENGTH_COOCCURRENCE
                else:
                    relation_type = _UPPER_SNAKE_RE.sub("_", rtype).strip("_").upper()
                    strength = STRENGTH_VERB
                out.append((a, b, relation_type, keywords, sentence_text(sent), strength))
                pairs += 1
        return out

