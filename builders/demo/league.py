"""``league``: a football league over three seasons.

Stadiums, teams, squads of players, coaches, seasons, a double round-robin of matches
with home and away scores, the line-ups (appearances) and the goals. Each match has a
home and an away side, so a question about "the score" or "the team" can mean either:
the toolkit builds its column-ambiguous items on exactly that. Goals agree with the
scores, and every scorer was on the pitch at the minute of the goal.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from answerable.builders.demo.draw import (
    day_between,
    faker_for,
    iso_date,
    lognormal,
    pick,
    pick_many,
    poisson,
    table_rng,
)
from answerable.builders.demo.writer import TableRows

TEAM_COUNT = 16
FIRST_SEASON = 2021
SEASON_COUNT = 3
SQUAD = {"Goalkeeper": 3, "Defender": 8, "Midfielder": 8, "Forward": 6}
FORMATION = {"Defender": 4, "Midfielder": 4, "Forward": 2}
HEIGHT_CM = {"Goalkeeper": 190, "Defender": 184, "Midfielder": 178, "Forward": 181}
SCORING = {"Goalkeeper": 0.01, "Defender": 0.8, "Midfielder": 2.5, "Forward": 5.0}
TEAM_SUFFIXES = (
    "United",
    "City",
    "Rovers",
    "Athletic",
    "Wanderers",
    "Albion",
    "Town",
    "Rangers",
    "Olympic",
    "Dynamo",
    "Harriers",
    "Villa",
    "Borough",
    "Argyle",
    "Palace",
    "County",
)
STADIUM_PATTERNS = (
    "{surname} Park",
    "{city} Stadium",
    "{surname} Road",
    "{city} Arena",
    "The {surname} Ground",
    "{city} Community Stadium",
)
# nationality: (Faker locale for names, share of players)
NATIONALITIES = {
    "England": ("en_GB", 0.42),
    "Ireland": ("en_IE", 0.06),
    "Spain": ("es_ES", 0.07),
    "France": ("fr_FR", 0.08),
    "Germany": ("de_DE", 0.05),
    "Brazil": ("pt_BR", 0.06),
    "Portugal": ("pt_PT", 0.04),
    "Italy": ("it_IT", 0.03),
    "Netherlands": ("nl_NL", 0.05),
    "Norway": ("no_NO", 0.03),
    "Denmark": ("da_DK", 0.03),
    "Poland": ("pl_PL", 0.03),
    "Croatia": ("hr_HR", 0.02),
    "United States": ("en_US", 0.03),
}
FEET = {"Right": 0.74, "Left": 0.23, "Both": 0.03}

DDL = """
CREATE TABLE stadiums (
    stadium_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    capacity INTEGER NOT NULL,
    opened_year INTEGER NOT NULL
);
CREATE TABLE teams (
    team_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    city TEXT NOT NULL,
    founded_year INTEGER NOT NULL,
    stadium_id INTEGER NOT NULL,
    FOREIGN KEY (stadium_id) REFERENCES stadiums (stadium_id)
);
CREATE TABLE players (
    player_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    position TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    nationality TEXT NOT NULL,
    height_cm INTEGER,
    preferred_foot TEXT,
    shirt_number INTEGER NOT NULL,
    team_id INTEGER NOT NULL,
    FOREIGN KEY (team_id) REFERENCES teams (team_id)
);
CREATE TABLE coaches (
    coach_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    nationality TEXT NOT NULL,
    team_id INTEGER NOT NULL,
    start_date TEXT NOT NULL,
    end_date TEXT,
    FOREIGN KEY (team_id) REFERENCES teams (team_id)
);
CREATE TABLE seasons (
    season_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    start_date TEXT NOT NULL,
    end_date TEXT NOT NULL
);
CREATE TABLE matches (
    match_id INTEGER PRIMARY KEY,
    season_id INTEGER NOT NULL,
    matchday INTEGER NOT NULL,
    match_date TEXT NOT NULL,
    home_team_id INTEGER NOT NULL,
    away_team_id INTEGER NOT NULL,
    stadium_id INTEGER NOT NULL,
    home_score INTEGER NOT NULL,
    away_score INTEGER NOT NULL,
    attendance INTEGER,
    FOREIGN KEY (season_id) REFERENCES seasons (season_id),
    FOREIGN KEY (home_team_id) REFERENCES teams (team_id),
    FOREIGN KEY (away_team_id) REFERENCES teams (team_id),
    FOREIGN KEY (stadium_id) REFERENCES stadiums (stadium_id)
);
CREATE TABLE appearances (
    match_id INTEGER NOT NULL,
    player_id INTEGER NOT NULL,
    team_id INTEGER NOT NULL,
    started INTEGER NOT NULL,
    minutes_played INTEGER NOT NULL,
    yellow_cards INTEGER NOT NULL,
    red_cards INTEGER NOT NULL,
    PRIMARY KEY (match_id, player_id),
    FOREIGN KEY (match_id) REFERENCES matches (match_id),
    FOREIGN KEY (player_id) REFERENCES players (player_id),
    FOREIGN KEY (team_id) REFERENCES teams (team_id)
);
CREATE TABLE goals (
    goal_id INTEGER PRIMARY KEY,
    match_id INTEGER NOT NULL,
    player_id INTEGER NOT NULL,
    team_id INTEGER NOT NULL,
    minute INTEGER NOT NULL,
    is_penalty INTEGER NOT NULL,
    FOREIGN KEY (match_id) REFERENCES matches (match_id),
    FOREIGN KEY (player_id) REFERENCES players (player_id),
    FOREIGN KEY (team_id) REFERENCES teams (team_id)
)
"""


@dataclass
class Team:
    """A team with its home stadium and a hidden strength that shapes its results."""

    team_id: int
    name: str
    city: str
    founded_year: int
    stadium_id: int
    strength: float


@dataclass
class Player:
    """A squad player; ``quality`` (not stored) decides how often they start."""

    player_id: int
    team_id: int
    name: str
    position: str
    birth_date: date
    nationality: str
    height_cm: int | None
    preferred_foot: str | None
    shirt_number: int
    quality: float


@dataclass
class Match:
    """A fixture and its result."""

    match_id: int
    season_id: int
    matchday: int
    match_date: date
    home: Team
    away: Team
    stadium_id: int
    home_score: int = 0
    away_score: int = 0
    attendance: int | None = None


@dataclass
class Lineup:
    """Who played for one side in one match: minute on and off, and their cards."""

    match_id: int
    team_id: int
    spells: dict[int, tuple[int, int]] = field(default_factory=dict)
    starters: set[int] = field(default_factory=set)
    yellow: set[int] = field(default_factory=set)
    red: set[int] = field(default_factory=set)


def build_league(seed: int) -> list[TableRows]:
    """All rows of ``league`` for ``seed``, parents before children."""
    stadiums = draw_stadiums(seed)
    teams = draw_teams(seed, stadiums)
    players = draw_players(seed, teams)
    seasons = season_schedules(table_rng(seed, "seasons"), teams)
    matches = play_matches(table_rng(seed, "matches"), seasons, stadiums)
    lineups = draw_lineups(table_rng(seed, "appearances"), matches, players)
    return [
        TableRows("stadiums", ("stadium_id", "name", "city", "capacity", "opened_year"), stadiums),
        team_rows(teams),
        player_rows(players),
        coach_rows(seed, teams),
        season_rows(seasons),
        match_rows(matches),
        appearance_rows(lineups),
        goal_rows(table_rng(seed, "goals"), matches, lineups, players),
    ]


def draw_stadiums(seed: int) -> list[tuple]:
    """One stadium per team, in distinct towns: ``(id, name, city, capacity, opened_year)``."""
    rng, fake = table_rng(seed, "stadiums"), faker_for(seed, "stadiums", "en_GB")
    rows = []
    for stadium_id in range(1, TEAM_COUNT + 1):
        city = fake.unique.city()
        name = rng.choice(STADIUM_PATTERNS).format(surname=fake.last_name(), city=city)
        capacity = 10 * round(min(75000, max(8000, lognormal(rng, 26000, 0.45))) / 10)
        rows.append((stadium_id, name, city, capacity, rng.randint(1890, 2016)))
    return rows


def draw_teams(seed: int, stadiums: list[tuple]) -> list[Team]:
    """A team for each stadium, named after its town."""
    rng = table_rng(seed, "teams")
    suffixes = rng.sample(TEAM_SUFFIXES, TEAM_COUNT)
    return [
        Team(
            team_id=stadium_id,
            name=f"{city} {suffix}",
            city=city,
            founded_year=rng.randint(1865, 1965),
            stadium_id=stadium_id,
            strength=rng.gauss(0.0, 0.3),
        )
        for (stadium_id, _, city, _, _), suffix in zip(stadiums, suffixes, strict=True)
    ]


def draw_players(seed: int, teams: list[Team]) -> list[Player]:
    """A squad of 25 per team, names drawn in the locale of each player's nationality."""
    rng = table_rng(seed, "players")
    fakers = {loc: faker_for(seed, "players", loc) for loc, _ in NATIONALITIES.values()}
    shares = {country: share for country, (_, share) in NATIONALITIES.items()}
    players: list[Player] = []
    for team in teams:
        outfield = [n for n in range(2, 40) if n not in (13, 31)]
        numbers = iter([1, 13, 31, *rng.sample(outfield, 22)])
        for position, count in SQUAD.items():
            for _ in range(count):
                country = pick(rng, shares)
                fake = fakers[NATIONALITIES[country][0]]
                players.append(
                    Player(
                        player_id=len(players) + 1,
                        team_id=team.team_id,
                        name=f"{fake.first_name_male()} {fake.last_name()}",
                        position=position,
                        birth_date=birth_date(rng, 26.0, 4.0, 17, 37),
                        nationality=country,
                        height_cm=None
                        if rng.random() < 0.08
                        else round(rng.gauss(HEIGHT_CM[position], 6)),
                        preferred_foot=None if rng.random() < 0.04 else pick(rng, FEET),
                        shirt_number=next(numbers),
                        quality=rng.random() ** 1.5,
                    )
                )
    return players


def birth_date(rng: random.Random, mean: float, sd: float, youngest: int, oldest: int) -> date:
    """A birth date giving an age near ``mean`` on 1 July of the first season."""
    age = min(oldest, max(youngest, rng.gauss(mean, sd)))
    return date(FIRST_SEASON, 7, 1) - timedelta(days=int(age * 365.25))


def coach_rows(seed: int, teams: list[Team]) -> TableRows:
    """``coaches``: each team's current coach, and for about half a predecessor."""
    rng = table_rng(seed, "coaches")
    fakers = {loc: faker_for(seed, "coaches", loc) for loc, _ in NATIONALITIES.values()}
    shares = {country: share for country, (_, share) in NATIONALITIES.items()}
    rows = []
    for team in teams:
        start = day_between(rng, date(2016, 6, 1), date(FIRST_SEASON, 6, 30))
        spells = [(start, None)]
        if rng.random() < 0.5:
            change = day_between(rng, date(FIRST_SEASON, 10, 1), date(2024, 3, 31))
            spells = [(start, change), (change + timedelta(days=1), None)]
        for first, last in spells:
            country = pick(rng, shares)
            fake = fakers[NATIONALITIES[country][0]]
            rows.append(
                (
                    len(rows) + 1,
                    f"{fake.first_name_male()} {fake.last_name()}",
                    iso_date(birth_date(rng, 50.0, 7.0, 34, 70)),
                    country,
                    team.team_id,
                    iso_date(first),
                    iso_date(last) if last else None,
                )
            )
    columns = ("coach_id", "name", "birth_date", "nationality", "team_id", "start_date", "end_date")
    return TableRows("coaches", columns, rows)


def season_schedules(rng: random.Random, teams: list[Team]) -> list[tuple[int, str, list]]:
    """``(season_id, name, fixtures)`` per season; fixtures are ``(matchday, day, home, away)``.

    A double round-robin (circle method): every team meets every other once at home and
    once away, one match a week from mid-August to late April.
    """
    seasons = []
    for index in range(SEASON_COUNT):
        year = FIRST_SEASON + index
        order = rng.sample(teams, len(teams))
        first_saturday = date(year, 8, 8) + timedelta(days=(5 - date(year, 8, 8).weekday()) % 7)
        fixtures = []
        for matchday, pairs in enumerate(round_robin(order), start=1):
            saturday = first_saturday + timedelta(weeks=matchday - 1 + weeks_off(matchday))
            for home, away in pairs:
                day = saturday + timedelta(days=rng.choices((0, 1, -1), (0.7, 0.2, 0.1))[0])
                fixtures.append((matchday, day, home, away))
        seasons.append((index + 1, f"{year}-{(year + 1) % 100:02d}", fixtures))
    return seasons


def weeks_off(matchday: int) -> int:
    """Weeks without league games before ``matchday``: international and winter breaks."""
    return sum(matchday > after for after in (4, 8, 12, 26)) + 2 * (matchday > 17)


def round_robin(teams: list) -> list[list[tuple]]:
    """Matchdays of a double round-robin: the second half mirrors the first."""
    rotating, rounds = list(teams), []
    for turn in range(len(teams) - 1):
        half = len(rotating) // 2
        pairs = list(zip(rotating[:half], reversed(rotating[half:]), strict=True))
        rounds.append([(a, b) if (turn + i) % 2 == 0 else (b, a) for i, (a, b) in enumerate(pairs)])
        rotating = [rotating[0], rotating[-1], *rotating[1:-1]]
    return rounds + [[(b, a) for a, b in pairs] for pairs in rounds]


def play_matches(rng: random.Random, seasons: list, stadiums: list[tuple]) -> list[Match]:
    """Every fixture with a score (Poisson, home advantage) and an attendance."""
    capacity = {row[0]: row[3] for row in stadiums}
    matches = []
    for season_id, _, fixtures in seasons:
        for matchday, day, home, away in sorted(fixtures, key=lambda f: (f[1], f[2].team_id)):
            # about one match in fifty moves to a neutral ground while a stadium is closed
            ground = home.stadium_id if rng.random() > 0.02 else rng.choice(list(capacity))
            match = Match(len(matches) + 1, season_id, matchday, day, home, away, ground)
            edge = home.strength - away.strength
            match.home_score = poisson(rng, 1.5 * math.exp(edge / 2))
            match.away_score = poisson(rng, 1.15 * math.exp(-edge / 2))
            if rng.random() > 0.03:
                match.attendance = int(capacity[ground] * min(1.0, rng.betavariate(6, 1.4)))
            matches.append(match)
    return matches


def draw_lineups(rng: random.Random, matches: list[Match], players: list[Player]) -> list[Lineup]:
    """Both line-ups of every match: eleven starters, up to three substitutes, cards."""
    squads: dict[int, list[Player]] = {}
    for player in players:
        squads.setdefault(player.team_id, []).append(player)
    return [
        draw_lineup(rng, match.match_id, squads[team.team_id])
        for match in matches
        for team in (match.home, match.away)
    ]


def draw_lineup(rng: random.Random, match_id: int, squad: list[Player]) -> Lineup:
    """One side's line-up: the better players start more often."""
    lineup = Lineup(match_id, squad[0].team_id)
    keepers = [p for p in squad if p.position == "Goalkeeper"]
    starters = [max(keepers, key=lambda p: p.quality) if rng.random() < 0.9 else keepers[1]]
    for position, count in FORMATION.items():
        group = [p for p in squad if p.position == position]
        starters += pick_many(rng, group, [0.05 + p.quality for p in group], count)
    lineup.starters = {p.player_id for p in starters}
    lineup.spells = {p.player_id: (0, 90) for p in starters}
    bench = [p for p in squad if p.player_id not in lineup.starters and p.position != "Goalkeeper"]
    for substitute in rng.sample(bench, rng.choices((0, 1, 2, 3), (0.05, 0.15, 0.35, 0.45))[0]):
        leaving = rng.choice([p for p in starters[1:] if lineup.spells[p.player_id][1] == 90])
        minute = rng.randint(46, 89) if rng.random() < 0.85 else rng.randint(20, 45)
        lineup.spells[leaving.player_id] = (0, minute)
        lineup.spells[substitute.player_id] = (minute, 90)
    draw_cards(rng, lineup)
    return lineup


def draw_cards(rng: random.Random, lineup: Lineup) -> None:
    """Yellow cards for about one player in eight; a rare red card ends a player's match."""
    for player_id, (on, off) in list(lineup.spells.items()):
        if rng.random() < 0.12:
            lineup.yellow.add(player_id)
        if off == 90 and on < 80 and rng.random() < 0.006:
            lineup.red.add(player_id)
            lineup.spells[player_id] = (on, rng.randint(on + 1, 89))


def goal_rows(
    rng: random.Random, matches: list[Match], lineups: list[Lineup], players: list[Player]
) -> TableRows:
    """``goals``: as many as the score says, each by a player on the pitch at that minute."""
    position = {p.player_id: p.position for p in players}
    sides = {(lineup.match_id, lineup.team_id): lineup for lineup in lineups}
    rows = []
    for match in matches:
        goals = []
        for team, count in ((match.home, match.home_score), (match.away, match.away_score)):
            lineup = sides[(match.match_id, team.team_id)]
            for _ in range(count):
                minute = rng.randint(1, 90)
                scorer = draw_scorer(rng, lineup, minute, position)
                goals.append((minute, team.team_id, scorer, int(rng.random() < 0.1)))
        for minute, team_id, scorer, penalty in sorted(goals):
            rows.append((len(rows) + 1, match.match_id, scorer, team_id, minute, penalty))
    columns = ("goal_id", "match_id", "player_id", "team_id", "minute", "is_penalty")
    return TableRows("goals", columns, rows)


def draw_scorer(rng: random.Random, lineup: Lineup, minute: int, position: dict) -> int:
    """A player on the pitch at ``minute``, forwards far more often than defenders."""
    on_pitch = [pid for pid, (on, off) in lineup.spells.items() if on < minute <= off]
    on_pitch = on_pitch or sorted(lineup.starters)
    return rng.choices(on_pitch, [SCORING[position[pid]] for pid in on_pitch])[0]


def team_rows(teams: list[Team]) -> TableRows:
    """``teams`` rows."""
    rows = [(t.team_id, t.name, t.city, t.founded_year, t.stadium_id) for t in teams]
    return TableRows("teams", ("team_id", "name", "city", "founded_year", "stadium_id"), rows)


def player_rows(players: list[Player]) -> TableRows:
    """``players`` rows."""
    rows = [
        (
            p.player_id,
            p.name,
            p.position,
            iso_date(p.birth_date),
            p.nationality,
            p.height_cm,
            p.preferred_foot,
            p.shirt_number,
            p.team_id,
        )
        for p in players
    ]
    columns = (
        "player_id",
        "name",
        "position",
        "birth_date",
        "nationality",
        "height_cm",
        "preferred_foot",
        "shirt_number",
        "team_id",
    )
    return TableRows("players", columns, rows)


def season_rows(seasons: list) -> TableRows:
    """``seasons``: name and the first and last match days."""
    rows = [
        (
            season_id,
            name,
            iso_date(min(f[1] for f in fixtures)),
            iso_date(max(f[1] for f in fixtures)),
        )
        for season_id, name, fixtures in seasons
    ]
    return TableRows("seasons", ("season_id", "name", "start_date", "end_date"), rows)


def match_rows(matches: list[Match]) -> TableRows:
    """``matches`` rows."""
    rows = [
        (
            m.match_id,
            m.season_id,
            m.matchday,
            iso_date(m.match_date),
            m.home.team_id,
            m.away.team_id,
            m.stadium_id,
            m.home_score,
            m.away_score,
            m.attendance,
        )
        for m in matches
    ]
    columns = (
        "match_id",
        "season_id",
        "matchday",
        "match_date",
        "home_team_id",
        "away_team_id",
        "stadium_id",
        "home_score",
        "away_score",
        "attendance",
    )
    return TableRows("matches", columns, rows)


def appearance_rows(lineups: list[Lineup]) -> TableRows:
    """``appearances``: one row per player who took the pitch, sorted by player id."""
    rows = [
        (
            lineup.match_id,
            player_id,
            lineup.team_id,
            int(player_id in lineup.starters),
            off - on,
            int(player_id in lineup.yellow),
            int(player_id in lineup.red),
        )
        for lineup in lineups
        for player_id, (on, off) in sorted(lineup.spells.items())
    ]
    columns = (
        "match_id",
        "player_id",
        "team_id",
        "started",
        "minutes_played",
        "yellow_cards",
        "red_cards",
    )
    return TableRows("appearances", columns, rows)
