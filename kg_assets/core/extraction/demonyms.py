"""Nationality, regional and religious adjectives and demonyms ("Syrian", "Germans", "Muslim"): words about
a place or a faith, not names of an entity of their own.

One general list: the adjective of every sovereign state (UN members and observers, plus Kosovo and
Taiwan), the common regional ones, and the adjectives of the major religions; plurals are derived
("Germans", "Israelis", "Muslims"). Hand-written (no installed package ships demonyms): it names no
document. :func:`is_demonym` is the test the row builder uses.
"""

from __future__ import annotations

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
Kurdish Swazis Swazi
"""
_REGIONAL = """
African Arab Arabic Asian Balkan Caucasian Central Asian Eurasian European Latin American
Latino Latina Hispanic Middle Eastern Nordic North African North American North Korean
Scandinavian South African South American South Korean Southeast Asian Sub-Saharan West African
East African Western Eastern Soviet Persian Pashtun Tamil Sikh Tibetan Uyghur Uighur Yazidi Berber Bedouin
Basque Catalan Flemish Walloon Chechen Crimean Slavic Romani
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
_SPACE = re.compile(r"\s+")


def is_demonym(name: str) -> bool:
    """True for a nationality, regional or religious adjective or demonym written as the whole name, with an
    optional leading "the" ("the Dutch"): "Syrian", "Germans", "Muslim", "Sri Lankans"."""
    text = _SPACE.sub(" ", name.strip().strip("\"'“”‘’.,;:()")).casefold()
    if text.startswith("the "):
        text = text[4:]
    return text in DEMONYMS
