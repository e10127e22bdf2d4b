"""Synthetic English corpus for benchmarking `kg run`: deterministic per seed, fast, realistic names.

Every document starts with a title and a ``Date: YYYY-MM-DD`` line, then paragraphs of sentences that
connect entities with verbs ("X joined Y in Z", "X acquired Y", "X presented T at E"). About a quarter
of the documents are Markdown with ``#``/``##`` headings; the rest are plain text.

Entities come from fixed pools (a few thousand people, about a thousand organisations, a few hundred
places, technologies and events) and are drawn with Zipf-like weights, so a few recur in a large share
of the documents and most are rare — as in a real inbox. Inside a document an entity's first mention
is its full form ("Dr. Sarah Chen", "Quantum Dynamics Lab (QDL)"); later mentions use variants
("Chen", "QDL", "Northwind" for "Northwind Inc.").

Usage::

    python benchmarks/generate_corpus.py OUT_DIR --docs 10000 [--chars 2000] [--seed 0]

Files go to ``OUT_DIR/batch_000/``, ``OUT_DIR/batch_001/`` ... with at most 1,000 files per folder.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

FILES_PER_FOLDER = 1000
MARKDOWN_SHARE = 0.25
ZIPF_EXPONENT = 1.0
ZIPF_OFFSET = 2.5  # Zipf-Mandelbrot: weight 1 / (rank + offset) ** exponent; softens the very top ranks

# ---- word lists ------------------------------------------------------------------------------------

FIRST_NAMES = """
Sarah Marcus Priya Jordan Alan Lena Rafael Beatriz Layla Samir Stefan Zoe Emma Liam Olivia Noah Ava
Ethan Sophia Mason Isabella Lucas Mia Logan Amelia James Harper Benjamin Evelyn Elijah Abigail Oliver
Emily Daniel Elizabeth Henry Sofia Alexander Avery Michael Ella Sebastian Scarlett Jack Grace Owen Chloe
Samuel Victoria Matthew Riley David Aria Joseph Lily Carter Aubrey Wyatt Zoey John Penelope Luke Hannah
Gabriel Nora Anthony Camila Isaac Leah Dylan Hazel Andrew Violet Joshua Aurora Christopher Savannah
Nathan Audrey Thomas Brooklyn Caleb Bella Ryan Claire Adrian Skylar Hugo Ingrid Kenji Yuki Haruto Sakura
Wei Mei Jun Lin Arjun Ananya Rohan Kavya Vikram Meera Omar Fatima Yusuf Aisha Hassan Leila Karim Nadia
Mateo Valentina Diego Camille Louis Chloé Pierre Amélie Klaus Greta Lars Astrid Sven Freya Jan Eva Pavel
Olga Dmitri Irina Tomasz Katarzyna Giulia Marco Francesca Luca Chiara Kofi Ama Chinedu Ngozi Tunde Zanele
Thabo Lerato Ahmed Mariam Tariq Salma Ivan Elena Nikolai Anya Carlos Lucia Javier Paula Miguel Rosa
Andrés Gabriela Felipe Mariana Rahul Sneha Aditya Divya Hiroshi Aiko Takeshi Emi Min-jun Seo-yeon Ji-ho
Soo-ah Minh Linh Duc Thao Siddharth Tanvi Eitan Noa Yosef Tamar Cyrus Shirin Darius Roxana Bjorn Sigrid
""".split()

LAST_NAMES = """
Chen Webb Natarajan Reyes Okafor Ortiz Souza Lima Haddad Khalil Vogel Muller Smith Johnson Williams Brown
Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson Anderson Thomas Taylor Moore
Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King
Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts
Tanaka Suzuki Sato Watanabe Yamamoto Nakamura Kobayashi Wang Li Zhang Liu Yang Huang Zhao Wu Zhou Xu Sun
Patel Shah Sharma Gupta Singh Kumar Iyer Rao Menon Desai Kapoor Bose Das Mehta Nair Kim Park Choi Jung Kang
Cho Yoon Jang Tran Pham Hoang Vu Dang Bui Schmidt Schneider Fischer Weber Meyer Wagner Becker Schulz
Hoffmann Koch Dubois Laurent Moreau Lefebvre Girard Bonnet Rossi Russo Ferrari Esposito Bianchi Romano
Colombo Ricci Novak Kowalski Nowak Wisniewski Horvat Ivanov Petrov Smirnov Popov Volkov Sokolov Andersson
Johansson Karlsson Nilsson Larsen Hansen Jensen Nielsen Berg Lindqvist Eriksen Mensah Owusu Adeyemi
Okonkwo Nwosu Abubakar Dlamini Ndlovu Mokoena Hassan Mansour Farouk Saleh Nasser Aziz Rahman Karimi
Hosseini Tehrani Cohen Levi Friedman Katz Mizrahi O'Brien O'Connor Murphy Kelly Walsh Byrne McCarthy
Fernandes Oliveira Santos Pereira Costa Almeida Carvalho Ribeiro Gomes Alves Silva Castillo Vargas Morales
Ortega Delgado Navarro Romero Herrera Medina Aguilar Rojas Vega Van der Berg
""".split()
LAST_NAMES = [n for n in LAST_NAMES if n not in {"Van", "der"}] + ["van der Berg", "de Vries", "da Silva", "von Braun"]

HONORIFICS = ["Dr.", "Prof.", "Ms.", "Mr."]

ORG_WORDS_A = """
Quantum Blue Northern Silver Bright Open Deep Clear Red Green Iron Golden Crystal Stellar Urban Pacific
Atlantic Alpine Coastal Digital Nordic Global Rapid Prime Vector Signal Polar Solar Lunar Harbor River
Summit Cedar Maple Granite Copper Nova Orbit Pixel Tensor Photon Neural Cobalt Falcon Horizon Meridian
""".split()
ORG_WORDS_B = """
Dynamics Systems Analytics Robotics Networks Bio Energy Materials Devices Computing Optics Data Logic
Health Mobility Security Semiconductors Sensors Software Genomics Photonics Cloud Robotics Finance Labs
""".split()
ORG_SUFFIXES = ["Inc.", "Ltd.", "Labs", "Lab", "GmbH", "Corp.", "Group", "Institute", "Technologies", "Foundation"]
ORG_COINED = """
Northwind Alpenquant Lumen Helix Zentra Korvo Brightwave Solvane Quorra Veltrix Nimbra Ostrava Kaldera
Fennix Marlow Tessaro Arcturo Ventis Obsidia Calyx Luminar Pyxis Halcyon Aurelia Bramble Corvid Driftline
Emberly Fathom Glimmer Hollis Ironclad Juniper Kestrel Larkspur Mosaic Nautica Onyx Pinecrest Quill Riven
Sablewood Thistle Umbra Verity Wren Xylo Yarrow Zephyr Acorn Beacon Cinder Dovetail Everest Flint Gale
""".split()

CITIES = [
    ("Boston", "United States"), ("Cambridge", "United States"), ("New York", "United States"),
    ("San Francisco", "United States"), ("Seattle", "United States"), ("Austin", "United States"),
    ("Chicago", "United States"), ("Denver", "United States"), ("Boulder", "United States"),
    ("Pittsburgh", "United States"), ("Atlanta", "United States"), ("Toronto", "Canada"),
    ("Montreal", "Canada"), ("Vancouver", "Canada"), ("Mexico City", "Mexico"), ("São Paulo", "Brazil"),
    ("Rio de Janeiro", "Brazil"), ("Buenos Aires", "Argentina"), ("Santiago", "Chile"), ("Lima", "Peru"),
    ("Bogotá", "Colombia"), ("London", "United Kingdom"), ("Manchester", "United Kingdom"),
    ("Edinburgh", "United Kingdom"), ("Dublin", "Ireland"), ("Paris", "France"), ("Lyon", "France"),
    ("Grenoble", "France"), ("Berlin", "Germany"), ("Munich", "Germany"), ("Hamburg", "Germany"),
    ("Zurich", "Switzerland"), ("Geneva", "Switzerland"), ("Vienna", "Austria"), ("Amsterdam", "Netherlands"),
    ("Delft", "Netherlands"), ("Brussels", "Belgium"), ("Copenhagen", "Denmark"), ("Stockholm", "Sweden"),
    ("Oslo", "Norway"), ("Helsinki", "Finland"), ("Warsaw", "Poland"), ("Prague", "Czech Republic"),
    ("Budapest", "Hungary"), ("Madrid", "Spain"), ("Barcelona", "Spain"), ("Lisbon", "Portugal"),
    ("Milan", "Italy"), ("Rome", "Italy"), ("Athens", "Greece"), ("Istanbul", "Turkey"), ("Amman", "Jordan"),
    ("Beirut", "Lebanon"), ("Cairo", "Egypt"), ("Tel Aviv", "Israel"), ("Dubai", "United Arab Emirates"),
    ("Riyadh", "Saudi Arabia"), ("Nairobi", "Kenya"), ("Lagos", "Nigeria"), ("Accra", "Ghana"),
    ("Cape Town", "South Africa"), ("Johannesburg", "South Africa"), ("Kigali", "Rwanda"),
    ("Mumbai", "India"), ("Bangalore", "India"), ("New Delhi", "India"), ("Hyderabad", "India"),
    ("Singapore", "Singapore"), ("Kuala Lumpur", "Malaysia"), ("Jakarta", "Indonesia"), ("Bangkok", "Thailand"),
    ("Hanoi", "Vietnam"), ("Manila", "Philippines"), ("Seoul", "South Korea"), ("Busan", "South Korea"),
    ("Tokyo", "Japan"), ("Osaka", "Japan"), ("Kyoto", "Japan"), ("Beijing", "China"), ("Shanghai", "China"),
    ("Shenzhen", "China"), ("Hong Kong", "China"), ("Taipei", "Taiwan"), ("Sydney", "Australia"),
    ("Melbourne", "Australia"), ("Auckland", "New Zealand"), ("Reykjavik", "Iceland"), ("Tallinn", "Estonia"),
]

REAL_TECH = """
Python DuckDB PyTorch Kubernetes Rust PostgreSQL Kafka Spark TensorFlow React Docker Terraform Linux
Dagster Airflow Snowflake BigQuery Redis Elasticsearch GraphQL Golang TypeScript Julia Polars Pandas
Arrow Parquet Ray JAX Qiskit Cirq Flink Trino ClickHouse Prometheus Grafana
""".split()
TECH_SYLLABLES_A = "Qubit Drift Flux Graph Stream Spark Core Data Node Wave Edge Pulse Signal Trace Vector Tensor Lattice Orbit Prism Forge".split()
TECH_SYLLABLES_B = "line wood base kit flow hub stack grid mesh lens scope sync works forge port loom path mind shift bridge".split()

EVENT_TOPICS = ["Quantum", "AI", "Data", "Robotics", "Climate", "Biotech", "Security", "Cloud", "Energy",
                "Photonics", "Open Source", "Machine Learning", "Fintech", "Health Tech", "Materials"]
EVENT_KINDS = ["Summit", "Conference", "Workshop", "Forum", "Symposium", "Expo"]
EVENT_ACRONYMS = ["NeurIPS", "ICML", "ICLR", "KDD", "CVPR", "ACL", "SIGMOD", "VLDB", "PyCon", "KubeCon",
                  "QIP", "APS March Meeting", "RSA Conference", "Web Summit", "CES"]

ROLES = ["CEO", "CTO", "chief scientist", "head of research", "research engineer", "product manager",
         "director", "postdoctoral researcher", "data engineer", "founder", "vice president of engineering",
         "professor", "doctoral student", "program manager", "lead developer"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
SECTIONS = ["Background", "Highlights", "People", "Technical Work", "Partnerships", "Next Steps", "Risks",
            "Outcomes", "Discussion", "Open Questions", "Timeline", "Budget"]
FILLER = [
    "The team expects first results by the end of the quarter.",
    "Several open questions remain about cost and staffing.",
    "Attendance was higher than last year, and the feedback was mostly positive.",
    "Most of the work so far has focused on reliability rather than new features.",
    "A follow-up meeting is planned for next month.",
    "The budget for the next phase has not been approved yet.",
    "Everyone agreed that the documentation needs more examples.",
    "Early tests were encouraging, although the sample was small.",
    "The schedule slipped by about two weeks because of hardware delays.",
    "This note summarizes the main decisions and the people responsible for them.",
    "Nobody expects the migration to be finished before the summer.",
    "The numbers below are preliminary and may change after review.",
]


# ---- entities --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Entity:
    first: str  # full form on first mention in a document
    short: tuple[str, ...]  # variants used for later mentions (the full form is among them)


def _zipf_cum_weights(n: int, exponent: float = ZIPF_EXPONENT, offset: float = ZIPF_OFFSET) -> list[float]:
    return list(itertools.accumulate(1.0 / ((rank + offset) ** exponent) for rank in range(1, n + 1)))


def _acronym(name: str) -> str:
    return "".join(w[0] for w in name.replace("-", " ").split() if w[0].isupper())


def _people(rng: random.Random, n: int) -> list[Entity]:
    out, seen = [], set()
    while len(out) < n:
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        if (first, last) in seen:
            continue
        seen.add((first, last))
        full = f"{first} {last}"
        roll = rng.random()
        honorific = "Dr." if roll < 0.15 else "Prof." if roll < 0.22 else "Ms." if roll < 0.27 else None
        surname = last
        shorts = (full, surname, surname) if honorific is None else (f"{honorific} {last}", surname, full)
        out.append(Entity(f"{honorific} {full}" if honorific else full, shorts))
    return out


def _organizations(rng: random.Random, n: int) -> list[Entity]:
    out, seen = [], set()
    city_names = [c for c, _ in CITIES]
    while len(out) < n:
        kind = rng.random()
        if kind < 0.40:
            base = f"{rng.choice(ORG_WORDS_A)} {rng.choice(ORG_WORDS_B)}"
            name = f"{base} {rng.choice(ORG_SUFFIXES)}"
        elif kind < 0.70:
            base = rng.choice(ORG_COINED) + (rng.choice(["", "", "", " " + rng.choice(ORG_WORDS_B)]))
            name = f"{base} {rng.choice(ORG_SUFFIXES)}"
        elif kind < 0.82:
            base = name = f"University of {rng.choice(city_names)}"
        elif kind < 0.90:
            base = name = f"{rng.choice(city_names)} Institute of {rng.choice(['Technology', 'Science', 'Advanced Study'])}"
        else:
            base = f"{rng.choice(LAST_NAMES)} {rng.choice(['Institute', 'Foundation', 'Research Center'])}"
            name = base
        if name in seen:
            continue
        seen.add(name)
        acronym = _acronym(name)
        if len(name.split()) >= 3 and 3 <= len(acronym) <= 5 and rng.random() < 0.6:
            out.append(Entity(f"{name} ({acronym})", (acronym, acronym, name)))
        elif base != name:
            out.append(Entity(name, (base, name)))
        else:
            out.append(Entity(name, (name,)))
    return out


def _places() -> list[Entity]:
    cities = [Entity(f"{city}, {country}", (city,)) for city, country in CITIES]
    countries = sorted({country for _, country in CITIES})
    return cities + [Entity(c, (c,)) for c in countries]


def _technologies(rng: random.Random, n: int) -> list[Entity]:
    names = list(REAL_TECH)
    coined = [a + b for a in TECH_SYLLABLES_A for b in TECH_SYLLABLES_B]
    rng.shuffle(coined)
    names += coined[: max(0, n - len(names))]
    # Real technologies are the most common; coined product names fill the tail.
    head, tail = names[:10], names[10:]
    rng.shuffle(tail)
    return [Entity(t, (t,)) for t in head + tail]


def _events(rng: random.Random, n: int) -> list[Entity]:
    out, seen = [], set()
    city_names = [c for c, _ in CITIES]
    while len(out) < n:
        year = rng.randint(2018, 2025)
        if rng.random() < 0.25:
            name = f"{rng.choice(EVENT_ACRONYMS)} {year}"
        else:
            name = f"{rng.choice(city_names)} {rng.choice(EVENT_TOPICS)} {rng.choice(EVENT_KINDS)} {year}"
        if name not in seen:
            seen.add(name)
            out.append(Entity(name, (name,)))
    return out


class Pools:
    """Entity pools with Zipf weights; one instance per seed."""

    def __init__(self, seed: int, people: int = 3000, organizations: int = 1200, technologies: int = 400,
                 events: int = 500) -> None:
        rng = random.Random(f"pools-{seed}")
        self.people = _people(rng, people)
        self.organizations = _organizations(rng, organizations)
        self.places = _places()
        rng.shuffle(self.places)
        self.technologies = _technologies(rng, technologies)
        self.events = _events(rng, events)
        self.cum = {k: _zipf_cum_weights(len(getattr(self, k)))
                    for k in ("people", "organizations", "places", "technologies", "events")}

    def draw(self, rng: random.Random, kind: str, k: int) -> list[Entity]:
        pool = getattr(self, kind)
        picked = rng.choices(pool, cum_weights=self.cum[kind], k=k * 2)
        return list(dict.fromkeys(picked))[:k] or picked[:1]


# ---- documents -------------------------------------------------------------------------------------

class _Doc:
    """One document's cast of entities and the mention state (first mention full, later variants)."""

    def __init__(self, rng: random.Random, pools: Pools) -> None:
        self.rng = rng
        self.people = pools.draw(rng, "people", rng.randint(2, 6))
        self.orgs = pools.draw(rng, "organizations", rng.randint(2, 4))
        self.places = pools.draw(rng, "places", rng.randint(1, 3))
        self.techs = pools.draw(rng, "technologies", rng.randint(1, 3))
        self.events = pools.draw(rng, "events", rng.randint(1, 2))
        self.seen: set[Entity] = set()

    def m(self, entity: Entity) -> str:
        if entity in self.seen:
            return self.rng.choice(entity.short)
        self.seen.add(entity)
        return entity.first

    def p(self) -> str:
        return self.m(self.rng.choice(self.people))

    def two(self, items: list[Entity]) -> tuple[str, str]:
        if len(items) < 2:
            return self.m(items[0]), self.m(items[0])
        a, b = self.rng.sample(items, 2)
        return self.m(a), self.m(b)

    def o(self) -> str:
        return self.m(self.rng.choice(self.orgs))

    def l(self) -> str:  # noqa: E743 - place
        return self.m(self.rng.choice(self.places))

    def t(self) -> str:
        return self.m(self.rng.choice(self.techs))

    def e(self) -> str:
        return self.m(self.rng.choice(self.events))


def _sentence(d: _Doc, rng: random.Random, year: int) -> str:
    month = rng.choice(MONTHS)
    pick = rng.randrange(24)
    if pick == 0:
        return f"{d.p()} joined {d.o()} in {d.l()} in {month} {year}."
    if pick == 1:
        a, b = d.two(d.orgs)
        return f"{a} acquired {b} for ${rng.randint(2, 900)} million."
    if pick == 2:
        return f"{d.p()} presented {d.t()} at {d.e()}."
    if pick == 3:
        a, b = d.two(d.people)
        return f"{a} and {b} co-authored a paper on {d.t()}."
    if pick == 4:
        return f"{d.o()} opened a new office in {d.l()}."
    if pick == 5:
        return f"{d.p()}, {rng.choice(ROLES)} at {d.o()}, said the team would adopt {d.t()} by {month}."
    if pick == 6:
        a, b = d.two(d.orgs)
        return f"{a} partnered with {b} to build a platform based on {d.t()}."
    if pick == 7:
        return f"{d.p()} leads the {d.t()} project at {d.o()}."
    if pick == 8:
        return f"{d.e()} took place in {d.l()} and drew about {rng.randint(40, 4000):,} attendees."
    if pick == 9:
        a, b = d.two(d.people)
        return f"{a} met {b} at {d.e()} in {d.l()}."
    if pick == 10:
        return f"{d.o()} released {d.t()} {rng.randint(1, 4)}.{rng.randint(0, 9)} in {month}."
    if pick == 11:
        a, b = d.two(d.orgs)
        return f"{d.p()} moved from {a} to {b} last year."
    if pick == 12:
        return f"{d.o()} is headquartered in {d.l()}."
    if pick == 13:
        return f"{d.p()} was appointed {rng.choice(ROLES)} of {d.o()} in {month} {year}."
    if pick == 14:
        a, b = d.two(d.people)
        return f"{a} reports to {b}."
    if pick == 15:
        a, b = d.two(d.orgs)
        return f"{a} invested ${rng.randint(1, 200)} million in {b}."
    if pick == 16:
        return f"According to {d.p()}, the migration to {d.t()} cut costs by {rng.randint(5, 60)} percent."
    if pick == 17:
        return f"{d.p()} visited {d.o()} in {d.l()} to discuss {d.t()}."
    if pick == 18:
        return f"{d.o()} sponsored {d.e()}."
    if pick == 19:
        return f"{d.p()} founded {d.o()} in {rng.randint(1995, year)}."
    if pick == 20:
        a, b = d.two(d.people)
        return f"{a} works with {b} on the {d.t()} integration."
    return rng.choice(FILLER)


def _title(d: _Doc, rng: random.Random) -> str:
    pick = rng.randrange(7)
    if pick == 0:
        a, b = d.two(d.orgs)
        return f"{a} and {b} announce partnership"
    if pick == 1:
        return f"Trip Report: {d.e()}"
    if pick == 2:
        return f"Meeting notes: {d.p()} and {d.o()}"
    if pick == 3:
        return f"{d.t()} release update"
    if pick == 4:
        return f"Quarterly update from {d.o()}"
    if pick == 5:
        return f"Visit to {d.l()}"
    return f"Project review: {d.t()} at {d.o()}"


def render(rng: random.Random, pools: Pools, chars: int, markdown: bool) -> str:
    d = _Doc(rng, pools)
    day = date(2018, 1, 1) + timedelta(days=rng.randrange(8 * 365))
    title = _title(d, rng)
    lines = [f"# {title}" if markdown else title, "", f"Date: {day.isoformat()}", ""]
    if rng.random() < 0.5:
        lines += [f"Author: {d.p()}, {d.o()}", ""]
    size = sum(len(x) + 1 for x in lines)
    sections = rng.sample(SECTIONS, len(SECTIONS))
    paragraph_no = 0
    while size < chars:
        if markdown and paragraph_no % 2 == 0 and sections:
            heading = f"## {sections.pop()}"
            lines += [heading, ""]
            size += len(heading) + 2
        paragraph = []
        for _ in range(rng.randint(3, 6)):
            sentence = _sentence(d, rng, day.year)
            paragraph.append(sentence)
            size += len(sentence) + 1
            if size >= chars:
                break
        lines += [" ".join(paragraph), ""]
        size += 1
        paragraph_no += 1
    return "\n".join(lines).rstrip() + "\n"


def generate(out_dir: Path, n_docs: int, chars: int = 2000, seed: int = 0) -> list[Path]:
    """Write `n_docs` synthetic documents of about `chars` characters under `out_dir`; returns their paths."""
    out_dir = Path(out_dir)
    pools = Pools(seed)
    rng = random.Random(seed)
    paths = []
    for i in range(n_docs):
        folder = out_dir / f"batch_{i // FILES_PER_FOLDER:03d}"
        if i % FILES_PER_FOLDER == 0:
            folder.mkdir(parents=True, exist_ok=True)
        markdown = rng.random() < MARKDOWN_SHARE
        text = render(rng, pools, chars, markdown)
        path = folder / f"doc_{i:06d}.{'md' if markdown else 'txt'}"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="folder to write the documents into (created)")
    parser.add_argument("--docs", type=int, default=1000, help="number of documents (default 1000)")
    parser.add_argument("--chars", type=int, default=2000, help="approximate characters per document (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed; same seed, same corpus (default 0)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    paths = generate(args.out_dir, args.docs, args.chars, args.seed)
    size = sum(p.stat().st_size for p in paths)
    print(f"wrote {len(paths):,} documents ({size / 1e6:.1f} MB) to {args.out_dir} "
          f"in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
