"""Nationality, regional and religious adjectives and demonyms ("Syrian", "Germans", "Muslim"): words about
a place or a faith, not names of an entity of their own.

One general list: the adjective of every sovereign state (UN members and observers, plus Kosovo and
Taiwan), the common regional ones, and the adjectives of the major religions; plurals are derived
("Germans", "Israelis", "Muslims"). Hand-written (no installed package ships demonyms): it names no
document. :func:`is_demonym` is the test the row builder uses.
"""

from __future__ import annotations

import functools
import re

# adjective forms, one word each (the plural of those ending in -an, -i, -ese is derived below)
_COUNTRY_ADJECTIVES = """
Afghan Albanian Algerian Andorran Angolan Antiguan Argentine Argentinian Armenian Australian Austrian
Azerbaijani Bahamian Bahraini Bangladeshi Barbadian Belarusian Belgian Belizean Beninese Bhutanese Bolivian
Bosnian Botswanan Brazilian British Bruneian Bulgarian Burkinabe Burmese Burundian Cambodian Cameroonian
Canadian Chadian Chilean Chinese Colombian Comoran Congolese Croatian Cuban Cypriot Czech Danish Djiboutian
Dominican Dutch Ecuadorian Egyptian Emirati English Equatoguinean Eritrean Estonian Eswatini Ethiopian Fijian
Filipino Finnish French Gabonese Gambian Georgian German Ghanaian Greek Grenadian Guatemalan Guinean Guyanese
Haitian Honduran Hungarian Icelandic Indian Indonesian Iranian Iraqi Irish Israeli Italian Ivorian Jamaican
Japanese Jordanian Kazakh Kazakhstani Kenyan Kiribati Korean Kosovar Kuwaiti Kyrgyz Lao Laotian Latvian
Lebanese Liberian Libyan Liechtensteiner Lithuanian Luxembourgish Malagasy Malawian Malaysian Maldivian
Malian Maltese Marshallese Mauritanian Mauritian Mexican Micronesian Moldovan Monegasque Mongolian
Montenegrin Moroccan Mozambican Namibian Nauruan Nepalese Nepali Nicaraguan Nigerian Nigerien Norwegian
Omani Pakistani Palauan Palestinian Panamanian Paraguayan Peruvian Polish Portuguese Qatari Romanian
Russian Rwandan Salvadoran Samoan Sammarinese Saudi Scottish Senegalese Serbian Seychellois Singaporean
Slovak Slovakian Slovenian Somali Somalian Spanish Sudanese Surinamese Swazi Swedish Swiss Syrian Taiwanese
Tajik Tajikistani Tanzanian Thai Togolese Tongan Trinidadian Tunisian Turkish Turkmen Tuvaluan Ugandan
Ukrainian Uruguayan Uzbek Uzbekistani Vanuatuan Venezuelan Vietnamese Welsh Yemeni Zambian Zimbabwean
Macedonian Sri Lankan Kittitian Lucian Vincentian Tobagonian Greenlandic Hongkonger Puerto Rican
"""
# people nouns with their own forms (no derived plural)
_PEOPLE = """
Americans American Britons Briton Brits Brit Danes Dane Dutchman Dutchmen Englishman Englishmen Finns Finn
Frenchman Frenchmen Frenchwoman Icelanders Icelander Irishman Irishmen Kiwis Kiwi Lao Luxembourgers
Luxembourger New Zealander New Zealanders Poles Pole Scots Scot Spaniards Spaniard Swedes Swede Thais Turks
Turk Welshman Welshmen Jews Hindus Sikhs Arabs Filipinos Filipinas Filipina Kyrgyzstani Kazakhs Uzbeks Tajiks Turkmens Kurds Kurd
Kurdish Swazis Swazi Catholics
"""
_REGIONAL = """
African Arab Arabic Asian Balkan Caucasian Central Asian Eurasian European Latin American
Latino Latina Hispanic Middle Eastern Nordic North African North American North Korean
Scandinavian South African South American South Korean Southeast Asian Sub-Saharan West African
East African Western Eastern Soviet Persian Pashtun Tamil Sikh Tibetan Uyghur Uighur Yazidi Berber Bedouin
Basque Catalan Flemish Walloon Chechen Crimean Slavic Romani
Bavarian Prussian Saxon Swabian Frisian Hessian Tyrolean Silesian Bohemian Moravian Alsatian Breton Corsican
Sicilian Sardinian Tuscan Venetian Neapolitan Andalusian Galician Cornish Texan Californian Floridian Berliner
Londoner Parisian Muscovite Viennese
"""
_RELIGIOUS = """
Muslim Islamic Islamist Christian Catholic Protestant Orthodox Evangelical Anglican Lutheran Methodist
Baptist Jewish Jew Judaic Hindu Buddhist Shia Shiite Shi'ite Sunni Sufi Salafi Salafist Wahhabi Jihadist
Coptic Maronite Druze Alawite Mormon Pentecostal Presbyterian Atheist Secular Zionist Hasidic
"""


def _plural(word: str) -> list[str]:
    if word.endswith(("s", "sh", "ch", "x", "ese", "ic")):
        return []
    return [word + "s"]


def _forms() -> frozenset[str]:
    words: set[str] = set()
    for block in (_COUNTRY_ADJECTIVES, _REGIONAL, _RELIGIOUS):
        for line in block.split("\n"):
            for w in line.split():
                words.add(w)
                words.update(_plural(w))
    # two-word forms written on one line above ("Sri Lankan", "Middle Eastern") are joined back
    for block in (_COUNTRY_ADJECTIVES, _REGIONAL, _PEOPLE):
        text = " ".join(block.split())
        for pair in re.findall(r"(?=\b((?:Sri|Puerto|Central|Latin|Middle|North|South|Southeast|Sub-|West|East|New)"
                               r"\w*\s\w+))", text):
            words.add(pair)
            words.update(_plural(pair))
    words.update(_PEOPLE.split())
    return frozenset(w.casefold() for w in words)


DEMONYMS: frozenset[str] = _forms()
# Names repeat across a batch's chunks (a corpus's frequent entities), and the checks on a name are pure: each
# distinct name is read once.
NAME_CACHE = 65_536
_SPACE = re.compile(r"\s+")


# Words that, around a demonym, still describe a group of people and name nothing: numbers and quantifiers
# ("Two Israelis", "Thousands of Syrians"), adjectives of age, origin, faith or stance ("Young Ugandan",
# "Ethnic Hungarians", "Roman Catholic"), compass words ("East German", "Eastern Europeans"), and plurals of
# roles ("German MPs", "African Writers").
_GROUP_WORDS = frozenset("""
one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred
hundreds thousand thousands million millions dozen dozens tens scores several many some few most all both
young old elderly ethnic fellow native local ordinary devout radical moderate militant hardline roman
ancient modern medieval contemporary
east west north south eastern western northern southern central northeastern northwestern southeastern
southwestern
mps meps ngos ceos lawmakers legislators politicians officials leaders experts tourists writers authors
artists workers soldiers troops refugees migrants immigrants students voters citizens nationals residents
activists fans players members delegates diplomats investors businessmen clerics priests
""".split())
# first parts of hyphenated adjectives that join nationalities ("Franco-German", "Indo-Pakistani", "Sino-US")
_COMBINING_FORMS = frozenset("franco anglo indo sino russo afro euro judeo greco austro italo hispano luso "
                             "turco irano germano polono pan".split())


# first words of two-word demonyms ("Middle Eastern", "New Zealander"), which the list also holds alone: inside a
# phrase they are no demonym ("Middle East" is a place)
_FIRST_PARTS = frozenset("sri puerto central latin middle north south southeast sub- west east new".split())


def _demonym_word(word: str) -> bool:
    return word in DEMONYMS and word not in _FIRST_PARTS


def _is_demonym_compound(word: str) -> bool:
    """A hyphenated adjective of nationalities or faiths: "Franco-German", "German-Jewish", "African-American"."""
    parts = [p for p in word.casefold().split("-") if p]
    return len(parts) >= 2 and all(_demonym_word(p) or (i < len(parts) - 1 and p in _COMBINING_FORMS)
                                   for i, p in enumerate(parts))


@functools.lru_cache(maxsize=NAME_CACHE)
def is_group_phrase(name: str) -> bool:
    """True for a phrase that describes people by nationality or faith and names no one: a demonym or a
    hyphenated compound of them ("Franco-German", "African-American"), alone or with numbers, quantifiers,
    adjectives, compass words and role plurals around it ("Six Israelis", "Thousands of Syrians", "East German",
    "Roman Catholic Italians", "German MPs"). A phrase with any other word ("German Bundestag", "Muslim
    Brotherhood", "Roman Catholic Church") is a name and stays."""
    words = _SPACE.sub(" ", name.strip().strip("\"'“”‘’.,;:()")).split(" ")
    if words and words[0].casefold() == "the":
        words = words[1:]
    found = False
    for i, word in enumerate(words):
        w = word.casefold()
        if _demonym_word(w) or _is_demonym_compound(w):
            found = True
        elif w in _GROUP_WORDS or (w == "of" and 0 < i < len(words) - 1):
            continue
        elif i + 1 < len(words) and f"{w} {words[i + 1].casefold()}" in DEMONYMS:
            continue  # the first word of a two-word demonym ("Sri Lankans"), the next word completes it
        else:
            return False
    return found


@functools.lru_cache(maxsize=NAME_CACHE)
def is_demonym(name: str) -> bool:
    """True for a nationality, regional or religious adjective or demonym written as the whole name, with an
    optional leading "the" ("the Dutch"): "Syrian", "Germans", "Muslim", "Sri Lankans"."""
    text = _SPACE.sub(" ", name.strip().strip("\"'“”‘’.,;:()")).casefold()
    if text.startswith("the "):
        text = text[4:]
    return text in DEMONYMS
