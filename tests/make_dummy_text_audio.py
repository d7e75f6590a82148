"""Write the dummy files of the text, tabular and audio builders, in each source's layout.

    python tests/make_dummy_text_audio.py             # every one of them
    python tests/make_dummy_text_audio.py glue iris   # some

(``python tests/make_dummy_data.py`` runs this too.) The contents are the constants below;
tests/builders/test_builders_text_audio.py checks every example prepared from them against the same
constants. Archives are written byte for byte the same on every run.
"""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from catalog.features.wav import write_wav

from make_dummy_data import BUILDERS, write_tar_gz

SHAKESPEARE = (
    "First Citizen:\nBefore we proceed any further, hear me speak.\n\n"
    "All:\nSpeak, speak.\n\nFirst Citizen:\nYou are all resolved rather to die than to famish?\n"
)

#: imdb: member path under aclImdb/ -> its bytes (surrounding whitespace is stripped on reading).
IMDB = {
    "train/neg/10_2.txt": "Dull.<br /><br />I left early. \n",
    "train/neg/3_1.txt": "  Not worth the ticket — really.",
    "train/pos/7_9.txt": "A joy from start to finish.\n",
    "train/unsup/0_0.txt": "Saw it on a plane.\n",
    "train/unsup/1_0.txt": "No opinion yet.",
    "test/neg/0_4.txt": "Too long by an hour.",
    "test/pos/4_10.txt": "Über-gorgeous photography!\n",
    "test/pos/5_8.txt": "Loved it.",
}
IMDB_OTHER = {  # members of the archive that are no examples
    "README": "Large Movie Review Dataset v1.0\n",
    "imdb.vocab": "the\nand\n",
    "train/urls_neg.txt": "http://www.imdb.com/title/tt0064354/usercomments\n",
    "train/labeledBow.feat": "9 0:9 1:1\n",
}

YELP_TRAIN = (
    '"1","Terrible service, ""never"" again.\\nWould not recommend."\n'
    '"2","Great tacos!  "\n'
    '"2","Best, friendliest staff in town."\n'
)
YELP_TEST = '"1","Cold fries."\n'

AG_NEWS_TRAIN = (
    '"3","Wall St. Bears Claw Back Into the Black (Reuters)","Reuters - Short-sellers, '
    "Wall Street's dwindling\\band of ultra-cynics, are seeing green again.\"\n"
    '"2","Phelps Wins Again","ATHENS - Michael Phelps won his ""fourth"" gold."\n'
    '"4","New Chip Unveiled","A faster chip, the company said."\n'
    '"1","Talks Resume","Diplomats met on Monday."\n'
)
AG_NEWS_TEST = '"4","Space Probe Launches","The probe lifted off at dawn."\n'

SQUAD_TRAIN = {
    "version": "1.1",
    "data": [
        {
            "title": "University_of_Notre_Dame",
            "paragraphs": [
                {
                    "context": "Architecturally, the school has a Catholic character.  Atop it",
                    "qas": [
                        {
                            "id": "5733be284776f41900661182",
                            "question": "What character does the school have?",
                            "answers": [{"text": "Catholic", "answer_start": 34}],
                        },
                        {
                            "id": "5733be284776f4190066117f",
                            "question": "What is atop it?",
                            "answers": [],
                        },
                    ],
                }
            ],
        },
        {
            "paragraphs": [  # no title: ""
                {
                    "context": "Beyoncé Giselle Knowles-Carter is a singer.",
                    "qas": [
                        {
                            "id": "56be85543aeaaa14008c9063",
                            "question": "Who is a singer?",
                            "answers": [
                                {"text": "Beyoncé", "answer_start": 0},
                                {"text": "Beyoncé Giselle Knowles-Carter", "answer_start": 0},
                            ],
                        }
                    ],
                }
            ]
        },
    ],
}
SQUAD_DEV = {
    "version": "1.1",
    "data": [
        {
            "title": "Super_Bowl_50",
            "paragraphs": [
                {
                    "context": "Denver won Super Bowl 50.",
                    "qas": [
                        {
                            "id": "56be4db0acb8001400a502ec",
                            "question": "Who won Super Bowl 50?",
                            "answers": [{"text": "Denver", "answer_start": 0}],
                        }
                    ],
                },
                {
                    "context": "The game was played in Santa Clara.",
                    "qas": [
                        {
                            "id": "56be4db0acb8001400a502ed",
                            "question": "Where was it played?",
                            "answers": [{"text": "Santa Clara", "answer_start": 23}],
                        },
                        {  # the same id again: its answers join the first one's
                            "id": "56be4db0acb8001400a502ec",
                            "question": "Who won Super Bowl 50 (again)?",
                            "answers": [{"text": "Denver Broncos", "answer_start": 0}],
                        },
                    ],
                },
            ],
        }
    ],
}

#: GLUE: member -> file text. CoLA train/dev have no header; the others do.
GLUE = {
    "CoLA.zip": {
        "CoLA/train.tsv": (
            "gj04\t1\t\tOur friends won't buy this analysis, let alone the next one we propose.\n"
            'gj04\t0\t*\tThey drank the pub "dry".\n'
            "cj99\t1\t\tOne more pseudo generalization and I'm giving up.\n"
        ),
        "CoLA/dev.tsv": "gj04\t0\t*\tThe more we study verbs, the crazier they get get.\n",
        "CoLA/test.tsv": (
            "index\tsentence\n0\tBill whistled past the house.\n1\tHe ran 'til dark.\n"
            "2\n"  # incomplete: dropped (as TFDS's DictReader drops it: its sentence is None)
            "3\tShe left.\n"
        ),
    },
    "SST-2.zip": {
        "SST-2/train.tsv": (
            'sentence\tlabel\nhide new secretions \t0\nthe greatest "musicians" \t1\n'
        ),
        "SST-2/dev.tsv": "sentence\tlabel\nit 's a charming journey . \t1\n",
        "SST-2/test.tsv": "index\tsentence\n0\tuneasy mishmash of styles\n",
    },
}

IRIS = (
    "5.1,3.5,1.4,0.2,Iris-setosa\n7.0,3.2,4.7,1.4,Iris-versicolor\n"
    "6.3,3.3,6.0,2.5,Iris-virginica\n\n"
)

TITANIC = (
    '"pclass","survived","name","sex","age","sibsp","parch","ticket","fare","cabin","embarked",'
    '"boat","body","home.dest"\n'
    '1,1,"Allen, Miss. Elisabeth Walton","female",29,0,0,"24160",211.3375,"B5","S","2",?,'
    '"St Louis, MO"\n'
    '3,0,"Abbott, Mr. Rossmore Edward","male",16,1,1,"C.A. 2673",20.25,?,"Q",?,190,?\n'
    '2,1,"Ng, Miss. Unknown age","female",?,0,2,"23",?,?,?,"13",?,"London"\n'
)

WINE_HEADER = (
    '"fixed acidity";"volatile acidity";"citric acid";"residual sugar";"chlorides";'
    '"free sulfur dioxide";"total sulfur dioxide";"density";"pH";"sulphates";"alcohol";"quality"\n'
)
WINE = {
    "white": (
        "7;0.27;0.36;20.7;0.045;45;170;1.001;3;0.45;8.8;6\n"
        "6.3;0.3;0.34;1.6;0.049;14;132;0.994;3.3;0.49;9.5;6\n"
        "8.1;0.28;0.4;6.9;0.05;30;97;0.9951;3.26;0.44;10.1;9\n"
    ),
    "red": (
        "7.4;0.7;0;1.9;0.076;11;34;0.9978;3.51;0.56;9.4;5\n"
        "7.8;0.88;0;2.6;0.098;25;67;0.9968;3.2;0.68;9.8;3\n"
    ),
}

#: spoken_digit: the recordings (file name -> number of samples), 8 kHz mono 16-bit.
SPOKEN_DIGIT = {"0_george_0.wav": 50, "0_jackson_1.wav": 31, "7_theo_12.wav": 64}

#: speech_commands: main archive member -> number of samples (16 kHz mono 16-bit).
SPEECH_MAIN = {
    "yes/abc_nohash_0.wav": 40,
    "yes/abd_nohash_0.wav": 41,  # validation
    "cat/xyz_nohash_0.wav": 42,  # not a command word: _unknown_
    "down/tst_nohash_0.wav": 43,  # in testing_list.txt: in no split
    "go/g0_nohash_1.wav": 44,  # validation (listed as ./go//g0_nohash_1.wav)
    "_background_noise_/white_noise.wav": 40000,  # train: windows at 0, 8000, 16000
    "_background_noise_/running_tap.wav": 32000,  # validation: windows at 0, 8000 (not 16000)
}
SPEECH_LISTS = {
    "validation_list.txt": "yes/abd_nohash_0.wav\n./go//g0_nohash_1.wav\n",
    "testing_list.txt": "down/tst_nohash_0.wav\n",
}
SPEECH_TEST = {"down/d1_nohash_0.wav": 30, "_silence_/s1.wav": 31, "_unknown_/u1_nohash_0.wav": 32}


def tone(count: int, seed: int) -> np.ndarray[Any, Any]:
    """`count` int16 samples, each predictable (and repeating every 997, so long recordings
    compress well): ``(37 * (seed + 3) * (i % 997)) % 65536 - 32768``."""
    i = np.arange(count, dtype=np.int64) % 997
    return ((37 * (seed + 3) * i) % 65536 - 32768).astype(np.int16)


def seed_of(name: str) -> int:
    """A stable seed for a file name (its bytes summed)."""
    return sum(name.encode())


def wav(name: str, count: int, rate: int) -> bytes:
    return write_wav(tone(count, seed_of(name)), rate)


def write_zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)


def _out(name: str) -> Path:
    out = BUILDERS / name / "dummy_data"
    out.mkdir(exist_ok=True)
    return out


def make_tiny_shakespeare() -> None:
    (_out("tiny_shakespeare") / "input.txt").write_bytes(SHAKESPEARE.encode())


def make_imdb_reviews() -> None:
    members = {f"aclImdb/{k}": v.encode() for k, v in {**IMDB, **IMDB_OTHER}.items()}
    write_tar_gz(_out("imdb_reviews") / "aclImdb_v1.tar.gz", members)


def make_yelp_polarity_reviews() -> None:
    members = {
        "yelp_review_polarity_csv/readme.txt": b"Yelp Review Polarity Dataset\n",
        "yelp_review_polarity_csv/train.csv": YELP_TRAIN.encode(),
        "yelp_review_polarity_csv/test.csv": YELP_TEST.encode(),
    }
    write_tar_gz(_out("yelp_polarity_reviews") / "yelp_review_polarity_csv.tgz", members)


def make_ag_news_subset() -> None:
    members = {
        "ag_news_csv/classes.txt": b"World\nSports\nBusiness\nSci/Tech\n",
        "ag_news_csv/train.csv": AG_NEWS_TRAIN.encode(),
        "ag_news_csv/test.csv": AG_NEWS_TEST.encode(),
    }
    write_tar_gz(_out("ag_news_subset") / "ag_news_csv.tar.gz", members)


def make_squad() -> None:
    out = _out("squad")
    (out / "train-v1.1.json").write_text(json.dumps(SQUAD_TRAIN, ensure_ascii=False), "utf-8")
    (out / "dev-v1.1.json").write_text(json.dumps(SQUAD_DEV), "utf-8")


def make_glue() -> None:
    for archive, members in GLUE.items():
        write_zip(_out("glue") / archive, {k: v.encode() for k, v in members.items()})


def make_iris() -> None:
    members = {"Index": b"Index of iris\n", "iris.data": IRIS.encode(), "iris.names": b"Iris\n"}
    write_zip(_out("iris") / "iris.zip", members)


def make_titanic() -> None:
    (_out("titanic") / "phpMYEkMl.csv").write_bytes(TITANIC.encode())


def make_wine_quality() -> None:
    for colour, rows in WINE.items():
        (_out("wine_quality") / f"winequality-{colour}.csv").write_bytes(
            (WINE_HEADER + rows).encode()
        )


def make_spoken_digit() -> None:
    top = "free-spoken-digit-dataset-1.0.9"
    members = {f"{top}/README.md": b"# Free Spoken Digit Dataset\n",
               f"{top}/utils/trimmer.py": b"print('trim')\n"}  # fmt: skip
    for name, count in SPOKEN_DIGIT.items():
        members[f"{top}/recordings/{name}"] = wav(name, count, 8000)
    write_tar_gz(_out("spoken_digit") / "free-spoken-digit-dataset-1.0.9.tar.gz", members)


def make_speech_commands() -> None:
    members = {name: wav(name, count, 16000) for name, count in SPEECH_MAIN.items()}
    members.update({k: v.encode() for k, v in SPEECH_LISTS.items()})
    members["LICENSE"] = b"CC BY 4.0\n"
    members["_background_noise_/README.md"] = b"Noise files.\n"
    write_tar_gz(_out("speech_commands") / "speech_commands_v0.02.tar.gz", members)
    test = {name: wav(name, count, 16000) for name, count in SPEECH_TEST.items()}
    test["LICENSE"] = b"CC BY 4.0\n"
    write_tar_gz(_out("speech_commands") / "speech_commands_test_set_v0.02.tar.gz", test)


MAKERS: dict[str, Callable[[], None]] = {
    "tiny_shakespeare": make_tiny_shakespeare,
    "imdb_reviews": make_imdb_reviews,
    "yelp_polarity_reviews": make_yelp_polarity_reviews,
    "ag_news_subset": make_ag_news_subset,
    "squad": make_squad,
    "glue": make_glue,
    "iris": make_iris,
    "titanic": make_titanic,
    "wine_quality": make_wine_quality,
    "spoken_digit": make_spoken_digit,
    "speech_commands": make_speech_commands,
}


def main(names: list[str]) -> None:
    for name in names or MAKERS:
        MAKERS[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
