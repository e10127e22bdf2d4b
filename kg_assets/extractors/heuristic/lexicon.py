"""Word lists of the heuristic extractor: function words, titles, head words, given names, verbs, roles,
the built-in gazetteer, and the regex pieces for words and capitals. Lowercase unless said otherwise;
``word_key`` is how a token is looked up in them.
"""

from __future__ import annotations

import re

UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"  # uppercase letters (Latin-1 included), as the body of a regex class
WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


# Capitalised words that never start or continue a name (compared lowercase; ALLCAPS "US"/"IT" exempt).
# Pronoun contractions are no names: "I'm Ana Ribeiro" names Ana Ribeiro.
_CONTRACTIONS = _words(
    """i'm i'd i'll i've we're we'd we'll we've you're you'd you'll you've he's he'd he'll she's she'd
    she'll it's it'd it'll they're they'd they'll they've that's there's here's what's who's let's"""
)
STOPWORDS = _CONTRACTIONS | {w.replace("'", "’") for w in _CONTRACTIONS} | _words(
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
# Clock and calendar words of datelines and broadcast schedules ("SUN 25.06.2017 – 01:15 UTC", "Berlin UTC
# +2", "Saturday's attack"): never a name nor part of one. Weekday names count in any case and with a
# possessive; time zones and weekday abbreviations only in capitals ("Sun" is also a name: Sun Microsystems).
WEEKDAYS = _words("monday tuesday wednesday thursday friday saturday sunday")
CLOCK_ABBREVIATIONS = _words(
    """utc gmt cet cest eet eest wet west bst est edt cst cdt mst mdt pst pdt akst hst jst kst msk aest aedt
    awst nzst nzdt ist sgt hkt mon tue tues wed thu thur thurs fri sat sun"""
)


def is_clock_word(word: str) -> bool:
    """A weekday name ("Saturday", "Monday's") or a capitalised time zone or weekday abbreviation ("UTC", "SUN")."""
    bare = re.sub(r"['’]s?$", "", word)
    return bare.casefold() in WEEKDAYS or (bare.isupper() and bare.casefold() in CLOCK_ABBREVIATIONS)


# Words of prompt and answer protocols (chat roles, the tuple format's terminators and record kinds, entity
# type names): a name made only of these is a document quoting a protocol, e.g. an injection, not an entity.
PROTOCOL_WORDS = _words(
    """system user assistant developer tool function complete continue entity entities relation relationship
    relations attribute attributes person organization location event concept technology product other"""
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
# (chamber chambers corps: heuristic-15, "Chamber of Commerce", "Army Corps of Engineers")
ORG_HEADS = _words(
    """inc corp corporation ltd llc llp plc gmbh ag co company companies group holdings lab labs
    laboratory laboratories university college school academy institute institution foundation bank
    agency ministry department council committee commission association society alliance federation
    organization organisation office bureau authority administration center centre robotics analytics
    systems technologies solutions software networks partners capital ventures industries enterprises
    media pharmaceuticals pharma therapeutics biosciences motors airlines airways studios records press
    times party army navy police court parliament senate congress government hospital clinic museum
    library club fc consortium collective cooperative union chamber chambers corps"""
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
CONF_ORG_HEAD = 0.8  # the type a head word gives a span of 2+ words, and how sure it is
CONF_EVENT_HEAD = 0.75
CONF_PLACE_HEAD = 0.75
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
# words after which "to" names whom something is said, given or lost to, not where one goes ("spoke to Jane Roe",
# "dedicated to ...", "lost to Velmora United", "a blow to ..."; heuristic-14)
RECIPIENT_BEFORE_TO = _words(
    """speak speaks spoke spoken speaking talking talks explain explained explaining reply replied replies
    respond responded responding react reacted reacting apologize apologized apologise apologised appeal
    appealed appealing dedicated dedicate dedicating devoted devote tribute lose loses lost losing loss losses
    defeat blow belong belongs belonged belonging married engaged wrote write writes writing letter
    letters message messages interview"""
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
    tina vera ida eva ella lily ruby jane judy joan helen ruth diane julie susanna victoria jordan"""
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
VERB_BASES = _words(
    """lead join acquire found co-found cofound work partner meet own build develop launch announce
    release use create invest hire buy sell visit move live head run manage direct teach study write speak
    host sponsor fund support attend present prefer collaborate compete serve chair oversee sue sign employ
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
    {f for b in VERB_BASES for f in _inflections(b) if f != b} | _IRREGULAR_VERBS
)
BASE_AFTER = _AUX | {"to"}
NOT_VERBS_ED = _words("hundred indeed speed breed embed bed red shed need seed feed united limited")


def is_verb_form(word: str) -> bool:
    """An inflected form of a listed verb, or any lower-case word of 5+ letters ending in -ed ("maintained")."""
    return word in VERB_FORMS or (len(word) >= 5 and word.endswith("ed") and word not in NOT_VERBS_ED)

# Words right after a mention that still let it be a relation endpoint (it is the subject, not a modifier).
REPORTING = _words("said says told announced reported added noted wrote explained confirmed")

def _country_names() -> set[str]:
    """Every country's name, common and official name from ISO 3166 (pycountry), inverted forms cut to their
    head ("Iran, Islamic Republic of" -> "Iran", "Falkland Islands (Malvinas)" -> "Falkland Islands")."""
    import pycountry

    # English short names that ISO spells otherwise (Türkiye, Russian Federation, Côte d'Ivoire ...) or lacks (Kosovo)
    names = {"Turkey", "Russia", "Ivory Coast", "Cape Verde", "Brunei", "Burma", "East Timor", "Vatican", "Macedonia",
             "Swaziland", "Kosovo"}
    for country in pycountry.countries:
        for field in ("name", "common_name", "official_name"):
            value = getattr(country, field, None)
            if value:
                names.add(value.split(",")[0].split("(")[0].strip())
    return names


BUILTIN_GAZETTEER: dict[str, str] = {
    # every country (a country named alone was OTHER wherever no preposition said "in"), then well-known places
    **{n: "LOCATION" for n in _country_names()},
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


def word_key(word: str) -> str:
    return word.lower().rstrip(".")


# Sentence splitting: no sentence ends at the dot of these; after these, only before a typical opener.
NO_BREAK_ABBR = _words(
    """dr mr mrs ms mx prof st mt ft jr sr vs e.g i.e cf fig no nos approx gen sen rep rev capt lt col
    sgt gov dept univ ca hon pres est"""
)
SOFT_ABBR = _words("inc corp ltd co llc plc bros etc al")
# Attribute cues: words that make a role phrase ("senior engineer", "chief technology officer").
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
SUBJECT_OPENERS = (
    _words(
        """and but or nor while when whereas since after before then so because although though that
        meanwhile now today later also yesterday finally eventually recently soon once if as where
        however thus hence"""
    )
    | REPORTING
)
SUBJECT_PRONOUNS = _words("i he she it we they you")
# Nouns for people by office, trade or kin: written in lower case right before a capitalised name, they say that
# the name is a person's ("the journalist Jane Roe", "striker Tom Doe", "his wife Ann"). A class of English nouns
# for people, not a list of names; words that are also adjectives or verbs before names ("general", "chief",
# "head", "lead", "witness", "partner", "judge") are left out.
PERSON_NOUNS = _words(
    """president president-elect vice-president chancellor minister secretary premier governor mayor senator
    congressman congresswoman lawmaker legislator politician diplomat ambassador envoy consul delegate
    commissioner councillor councilor spokesman spokeswoman spokesperson king queen prince princess pope emperor
    empress monarch sultan emir sheikh ayatollah imam cleric cardinal archbishop bishop rabbi pastor priest
    preacher monk nun chairman chairwoman chairperson ceo cto cfo coo founder co-founder cofounder director
    tycoon billionaire millionaire businessman businesswoman entrepreneur banker
    economist analyst strategist adviser advisor colonel captain lieutenant admiral sergeant commander
    soldier officer prosecutor lawyer attorney barrister solicitor professor lecturer teacher scientist
    researcher physicist chemist biologist mathematician historian archaeologist philosopher theologian
    sociologist psychologist psychiatrist physician surgeon doctor nurse journalist reporter correspondent editor
    columnist blogger author writer novelist poet playwright screenwriter filmmaker photographer painter sculptor
    artist architect designer composer conductor musician singer songwriter rapper guitarist pianist drummer
    violinist actor actress comedian dancer presenter anchor coach trainer referee
    player footballer striker midfielder defender goalkeeper winger athlete sprinter runner cyclist swimmer
    boxer wrestler skier golfer activist campaigner dissident dictator candidate
    colleague wife husband son daughter brother sister mother
    father uncle aunt cousin nephew niece grandson granddaughter grandfather grandmother widow widower fiancé
    fiancée girlfriend boyfriend"""
)
