"""The words of people's titles and offices, shared by extraction (`core/extraction/titles.py`: "US President Barack
Obama" is Barack Obama) and linking (`core/linking/type_vote.py`: "Prime Minister" is no person's name)."""

# words that head a person's title or role
TITLE_HEADS = frozenset("""
president president-elect vice-president chancellor vice-chancellor minister secretary premier governor mayor
senator congressman congresswoman representative ambassador envoy king queen prince princess pope emperor
chairman chairwoman chairperson chair ceo cto cfo coo director editor editor-in-chief spokesman spokeswoman
spokesperson commissioner general colonel captain lieutenant admiral marshal sergeant major commander sheikh
emir sultan ayatollah imam cardinal archbishop bishop rabbi pastor rapper singer actor actress coach striker
midfielder defender goalkeeper chief judge prosecutor founder co-founder executive professor dr mr mrs ms
lawmaker mp correspondent reporter journalist author novelist candidate frau herr monsieur madame dictator
leader head boss manager officer mep dj producer comedian musician painter photographer filmmaker composer
poet economist analyst archaeologist historian scientist researcher activist lawyer attorney priest father
witness duke duchess countess baron baroness
""".split())
# words that may stand before a head inside a title ("Prime Minister", "Foreign Secretary") and alone are no name
TITLE_MODIFIERS = frozenset("""
prime foreign interior defense defence finance economy economics justice deputy vice former acting state
federal national chief executive senior junior assistant general managing opposition party supreme
high superstar new research
""".split())
# offices named in the plural before several people ("Presidents Dilma Rousseff and ...")
TITLE_HEADS = TITLE_HEADS | {h + "s" for h in "president minister chancellor premier governor mayor senator".split()}
