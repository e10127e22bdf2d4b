"""Generate the bundled sample PDF: data/inbox/reports/annual_report_2025.pdf.

The PDF has a real text layer (fpdf2 core font Helvetica), so text extraction
with pypdf works. Core fonts only cover latin-1, so keep the text latin-1.

Usage (from the project root):
    .venv/bin/python scripts/make_sample_pdf.py
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from fpdf import FPDF

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "data" / "inbox" / "reports" / "annual_report_2025.pdf"

TITLE = "Quantum Dynamics Lab - Annual Report 2025"
DATE_LINE = "Date: 2025-12-10"

# (heading, [paragraphs]); heading None means intro paragraphs.
SECTIONS: list[tuple[str | None, list[str]]] = [
    (
        None,
        [
            "Prepared by Prof. Alan Okafor, Director, and Marcus Webb, Chief Technology "
            "Officer, Quantum Dynamics Lab (QDL), Cambridge, Massachusetts, United States.",
        ],
    ),
    (
        "1. Letter From the Director",
        [
            "2025 was the strongest year in the history of the Quantum Dynamics Lab. QDL "
            "released two versions of Qubitline, its open-source circuit simulator, "
            "published its first paper at NeurIPS 2025, and built an engineering group for "
            "the first time. The lab remains affiliated with the Massachusetts Institute of "
            "Technology, which renewed our core funding through 2027.",
            "The most important change was in our leadership. Marcus Webb, who spent nine "
            "years as a senior engineer at Northwind Robotics, joined QDL as Chief "
            "Technology Officer in June 2025. Webb now runs our Kubernetes infrastructure, "
            "the DuckDB calibration archive and the Qubitline release process.",
        ],
    ),
    (
        "2. Research Highlights",
        [
            "Dr. Sarah Chen leads the AI team at QDL. Her group trained a calibration model "
            "in PyTorch that reduced the time to calibrate a 20-qubit device from four hours "
            "to 27 minutes. Together with Dr. Zoë Müller of ETH Zurich, Chen developed "
            "transferable noise models that cut the number of calibration runs on new "
            "devices by 41 percent. The paper was presented at NeurIPS 2025 in San Diego. "
            "Alpenquant GmbH, a startup in Zurich led by Stefan Vogel, licensed the method.",
            "Müller will move to the Technical University of Munich in January 2026, and the "
            "collaboration will continue as a three-way project between QDL, ETH Zurich and "
            "TUM.",
        ],
    ),
    (
        "3. Qubitline and the Community",
        [
            "Jordan Reyes, research engineer and maintainer of Qubitline, released versions "
            "1.4 and 1.5. Qubitline 1.4 launched at the Boston Quantum Summit in March; "
            "version 1.5 added the Driftwood noise plugin. Reyes taught workshops at the "
            "Levant Quantum Workshop in Amman, Jordan, and at the University of São Paulo, "
            "hosted by Prof. Rafael Souza. The project now has 230 contributors.",
            "Lena Ortiz, who leads user support, moved from Boston to Lisbon in August and "
            "now covers European hours. The support chat handled more than 1,900 "
            "conversations in 2025.",
        ],
    ),
    (
        "4. Partners and Vendors",
        [
            "Lumen Analytics, founded by Priya Natarajan in Toronto, completed a twelve-week "
            "pilot of Lumen Lens at QDL. Following the pilot, QDL signed a three-year "
            "license. Lens reads our DuckDB archive directly and raised 19 real alerts "
            "during the pilot.",
            "Northwind Robotics Inc. supplies the four Northwind Atlas Arms in our cryostat "
            "room. Northwind acquired Helix Sensors Ltd. of Manchester in November 2024 and "
            "moved its headquarters from Boston to Pittsburgh in July 2025. Dr. Tom Brennan "
            "now leads Atlas engineering at Northwind after Webb's departure.",
        ],
    ),
    (
        "5. Finances and Staff",
        [
            "QDL closed the year with eighteen staff members and six MIT graduate students. "
            "Total expenses were 6.8 million U.S. dollars, of which 58 percent went to "
            "salaries and 17 percent to computing. Grants from the U.S. National Science "
            "Foundation and the Department of Energy covered 71 percent of the budget.",
        ],
    ),
    (
        "6. Priorities for 2026",
        [
            "Release Qubitline 2.0 with GPU simulation through PyTorch; hire two engineers "
            "under Marcus Webb, one of them in Europe; start a photonic calibration project "
            "with the University of São Paulo and TUM; hold a Qubitline workshop in Lisbon "
            "in May 2026; and present new results at the Boston Quantum Summit 2026.",
        ],
    ),
]


def build_pdf(path: Path = OUTPUT) -> Path:
    pdf = FPDF(format="A4")
    pdf.set_title(TITLE)
    pdf.set_author("Quantum Dynamics Lab")
    pdf.set_subject("Annual report 2025")
    pdf.set_creation_date(datetime(2025, 12, 10, 9, 0, tzinfo=timezone.utc))
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.set_margins(20, 20, 20)
    pdf.add_page()

    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 9, TITLE, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    pdf.cell(0, 7, DATE_LINE, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)

    for heading, paragraphs in SECTIONS:
        if heading:
            pdf.set_font("Helvetica", "B", 12)
            pdf.cell(0, 8, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 11)
        for para in paragraphs:
            para.encode("latin-1")  # core fonts are latin-1 only; fail early
            pdf.multi_cell(0, 5.5, para, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)

    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    return path


if __name__ == "__main__":
    print(build_pdf())
