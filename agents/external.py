"""``cmd:COMMAND`` agents: a bot in any language, run as a process speaking the Cribbage Bot
Protocol (:mod:`agents.protocol`, ``docs/protocol.md``).

``make_agent("cmd:python examples/cbp_bot.py")`` starts the program on first use, greets it,
tells it of each new game and asks it for a card at each decision with a choice (a single legal
card is laid for it, as for every bot). It plays wherever a bot plays: tournaments, the ladder,
the env's opponents, ``cribenv play``.

Time controls: ``move_time`` seconds a decision, ``game_time`` seconds a game (the clock is
sent with each decision), ``start_time`` seconds to start and answer the greeting; in a spec,
``cmd[move=2,game=60]:COMMAND`` (so that a tournament's or the ladder's bot carries them). Whatever
goes wrong (no answer in time, the process ends, a line that is not the answer asked for, an
illegal card, a line over ``max_line`` bytes, a line when none was asked, whenever it comes)
raises :class:`agents.arena.BotFailure` naming the bot, the kind and the last 2,000 characters
of its standard error, and the process group is killed; :func:`agents.arena.play_game` scores
the game as a loss for that bot (a tournament records the reason and goes on) and the next game
starts a fresh process. Standard error is the bot's log: it is kept (the last 2,000
characters, shown in failures) and never costs a game.

Between games the process is kept for the next game of the same command (a tournament makes a
new agent for every game), so a bot starts once per seat and worker, not once per game. When
cribenv is done with them (:func:`stop_idle` at a tournament's end, :meth:`ExternalBot.close`,
a pool worker's or cribenv's exit) each is sent ``quit`` and its group killed a second later.

>>> import sys
>>> from agents.arena import play_game
>>> from agents import make_agent
>>> bot = make_agent(f"cmd:{sys.executable} examples/cbp_bot.py", seed=1)
>>> result = play_game([bot, make_agent("random", seed=2)], seed=7)
>>> result.forfeit is None, bot.bot_name
(True, 'cbp-greedy')
>>> bot.close()
"""

from __future__ import annotations

import atexit
import json
import math
import os
import select
import shlex
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

from agents import protocol
from agents.arena import BotFailure
from agents.base import ViewAgent
from agents.spec import BotSpec, register_agent
from cribenv.game import Game, PlayerView, Rules

__all__ = ["ExternalBot"]

#: Seconds a decision, a game, and the start (the greeting answered), by default.
MOVE_TIME = 10.0
GAME_TIME = 600.0
START_TIME = 10.0
#: The longest line a bot may write, in bytes.
MAX_LINE = 65536
_STDERR_KEPT = 2000
#: Seconds spent polling for an answer before sleeping until it comes.
SPIN = 0.0005


class LineTooLong(Exception):
    """The bot wrote more than ``max_line`` bytes without a newline."""


class _Process:
    """One running bot program: its pipes, a line reader with deadlines, its stderr tail.

    The program runs in a process group of its own, and the whole group is killed when it is
    done with (:meth:`kill`): a child it started dies with it, even after the bot has ended."""

    def __init__(self, argv: list[str], cwd: str | None) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, bufsize=0, cwd=cwd,
                                     start_new_session=True)
        self.out = self.proc.stdout.fileno()
        self.inp = self.proc.stdin.fileno()
        os.set_blocking(self.out, False)
        try:   # readable once the program has ended, even while a child holds its output
            self.exit_fd: int | None = os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):   # pragma: no cover - not Linux 5.3+
            self.exit_fd = None
        self.buffer = bytearray()
        self.stderr = ""   # its last _STDERR_KEPT characters
        self.name = ""
        self.drainer = threading.Thread(target=self._drain_stderr, daemon=True)
        self.drainer.start()
        _LIVE.add(self)
        _stop_at_exit()

    def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        while True:
            chunk = stream.read1(4096) if hasattr(stream, "read1") else stream.read(4096)
            if not chunk:
                return
            self.stderr = (self.stderr + chunk.decode("utf-8", "replace"))[-_STDERR_KEPT:]

    def stderr_tail(self) -> str:
        return self.stderr.strip()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            try:
                sent = os.write(self.inp, view)
            except BlockingIOError:   # pragma: no cover - the pipe is full: wait a little
                select.select([], [self.inp], [], 0.05)
                continue
            view = view[sent:]

    def pending(self) -> bool:
        """Whether the bot wrote something nobody asked for (``EOFError``: it closed its
        output)."""
        if self.buffer:
            return True
        return bool(select.select([self.out], [], [], 0)[0]) and self._fill()

    def first_line(self) -> str:
        """The start of what is waiting to be read, for a message."""
        text = bytes(self.buffer[:200]).split(b"\n")[0].decode("utf-8", "replace")
        return protocol.clip(text.strip())

    def _fill(self) -> bool:
        try:
            chunk = os.read(self.out, 65536)
        except BlockingIOError:
            return False
        if not chunk:
            raise EOFError
        self.buffer += chunk
        return True

    def _take_line(self, max_line: int) -> str | None:
        end = self.buffer.find(b"\n")
        if end < 0:
            if len(self.buffer) > max_line:
                raise LineTooLong
            return None
        if end > max_line:
            raise LineTooLong
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        return line.decode("utf-8", "replace")

    def read_line(self, deadline: float, max_line: int) -> str:
        """The next line, by ``deadline`` (``perf_counter``): ``TimeoutError`` after it,
        ``EOFError`` when the bot closed its output or ended (a child of it may still hold
        the pipe open), :class:`LineTooLong` past ``max_line``.
        For the first :data:`SPIN` seconds it polls the pipe rather than sleeping on it (a
        process woken from a sleep costs tens of microseconds; a quick bot's whole answer
        takes about as long)."""
        spin_until = min(time.perf_counter() + SPIN, deadline)
        waits = [self.out] if self.exit_fd is None else [self.out, self.exit_fd]
        while True:
            line = self._take_line(max_line)
            if line is not None:
                return line
            now = time.perf_counter()
            if now < spin_until:   # a quick bot answers within microseconds: poll for it
                self._fill()
                continue
            left = deadline - now
            if left <= 0:
                raise TimeoutError
            # without a pidfd, look at the program every 0.1 s; never wait past an hour at once
            wait = min(left, 0.1 if self.exit_fd is None else 3600.0)
            ready = select.select(waits, [], [], wait)[0]
            if self.out in ready:
                self._fill()
            elif self.exit_fd in ready or (self.exit_fd is None and not self.alive()):
                self._drain(max_line)   # what it wrote before it ended still counts
                line = self._take_line(max_line)
                if line is None:
                    raise EOFError
                return line

    def _drain(self, max_line: int) -> None:
        try:
            while b"\n" not in self.buffer and len(self.buffer) <= max_line and self._fill():
                pass
        except EOFError:
            pass

    def kill(self) -> None:
        """Kill the program's whole process group (whether or not the program itself has
        ended: a child may hold its pipes) and reap it."""
        _LIVE.discard(self)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):   # the group is gone already
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:   # pragma: no cover - a broken pipe on close
                pass
        if self.exit_fd is not None:
            os.close(self.exit_fd)
            self.exit_fd = None
        self.proc.wait()


_LIVE: weakref.WeakSet[_Process] = weakref.WeakSet()
# Processes between games, by (argv, cwd): the next game of the same command takes one.
_IDLE: dict[tuple[tuple[str, ...], str | None], list[_Process]] = {}
#: Seconds a program has to end after ``quit`` before it is killed.
QUIT_GRACE = 1.0


def quit_all(procs: list[_Process], grace: float = QUIT_GRACE) -> None:
    """Send ``quit`` to each of ``procs``, give them ``grace`` seconds in all to end, then
    kill each one's process group (what it left behind included)."""
    for proc in procs:
        try:   # never blocks: a program that stopped reading its input is killed anyway
            os.set_blocking(proc.inp, False)
            os.write(proc.inp, b'{"type":"quit"}\n')
        except OSError:   # it has closed its input (it is ending), or its pipe is full
            pass
    deadline = time.perf_counter() + grace
    for proc in procs:
        try:
            proc.proc.wait(max(0.0, deadline - time.perf_counter()))
        except subprocess.TimeoutExpired:
            pass
        proc.kill()


def stop_idle(grace: float = QUIT_GRACE) -> None:
    """End the programs kept between games (a tournament's, at its end): ``quit``, then kill.
    A later game of their command starts a fresh one."""
    procs = [p for kept in _IDLE.values() for p in kept]
    _IDLE.clear()
    quit_all(procs, grace)


def stop_all(grace: float = QUIT_GRACE) -> None:
    """End every program this process started (at its exit): ``quit``, then kill."""
    _IDLE.clear()
    quit_all(list(_LIVE), grace)


atexit.register(stop_all)
_STOP_REGISTERED: list[int] = []


def _stop_at_exit() -> None:
    """Also end them when a worker process of a pool ends (``multiprocessing`` runs its
    finalizers there, not ``atexit``); once per process."""
    if os.getpid() not in _STOP_REGISTERED:
        import multiprocessing.util

        multiprocessing.util.Finalize(None, stop_all, exitpriority=10)
        _STOP_REGISTERED.append(os.getpid())


def _forget_inherited() -> None:
    """In a forked child: the parent's programs are the parent's (never taken, never killed
    here)."""
    for proc in list(_LIVE):
        if proc.exit_fd is not None:
            os.close(proc.exit_fd)
            proc.exit_fd = None
    _LIVE.clear()
    _IDLE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited)


def _positive(value: float, what: str) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a positive number of seconds, got {value!r}")
    return value


class ExternalBot(ViewAgent):
    """A bot program speaking the Cribbage Bot Protocol (see the module docstring).

    ``command``: the program and its arguments (a string is split as a shell would, without a
    shell). ``bot_name`` is the name the program gave in its greeting. ``transcript``: a file
    to which every line sent (``> ``) and received (``< ``) is appended, for a bot's author.
    """

    asks_forced = False

    def __init__(self, command: str | Sequence[str], seed: int | None = None, *,
                 move_time: float = MOVE_TIME, game_time: float = GAME_TIME,
                 start_time: float = START_TIME, max_line: int = MAX_LINE,
                 cwd: str | None = None, name: str | None = None,
                 transcript: str | os.PathLike[str] | None = None) -> None:
        super().__init__(seed)
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not argv:
            raise ValueError("'cmd:COMMAND' needs the command that runs the bot, e.g. "
                             "cmd:python examples/cbp_bot.py")
        self.argv = argv
        self.move_time = _positive(move_time, "move_time")
        self.game_time = _positive(game_time, "game_time")
        self.start_time = _positive(start_time, "start_time")
        if int(max_line) < 64:
            raise ValueError(f"max_line must be at least 64 bytes, got {max_line!r}")
        self.max_line = int(max_line)
        self.cwd = cwd
        self.transcript = None if transcript is None else open(transcript, "a", encoding="utf-8")
        self.name = name or "cmd:" + (command if isinstance(command, str) else shlex.join(argv))
        self.bot_name: str | None = None
        self._proc: _Process | None = None
        self._games = 0
        self._clock = self.game_time
        self._game: Game | None = None
        self._seat: int | None = None
        self._cursor = 0
        self._started = False

    # ------------------------------------------------------------------ the process
    def _key(self) -> tuple[tuple[str, ...], str | None]:
        return tuple(self.argv), self.cwd

    def _fail(self, kind: str, detail: str) -> BotFailure:
        tail = self._proc.stderr_tail() if self._proc is not None else ""
        if self._proc is not None:
            self._proc.kill()
            self._proc = None
        self._game, self._started = None, False
        message = f"bot {self.name!r} {detail}"
        if tail:
            message += f" (its stderr ends: {tail!r})"
        return BotFailure(message, agent=self.name, kind=kind, seat=self._seat)

    def _unasked(self, proc: _Process, when: str, line: str | None = None) -> BotFailure:
        """The failure of a bot that wrote ``line`` (default: what waits to be read), which
        nobody asked for, ``when``."""
        line = proc.first_line() if line is None else protocol.clip(line.strip())
        return self._fail("output", f"wrote a line nobody asked for {when}: {line!r} "
                                    "(standard output is for answers; a log goes to "
                                    "standard error)")

    def _ended(self, proc: _Process, doing: str) -> BotFailure:
        """The failure of a bot whose output closed: it ended, or closed it and lives on."""
        try:
            code = proc.proc.wait(0.5)
            proc.drainer.join(0.2)   # what it wrote to stderr as it ended
        except subprocess.TimeoutExpired:
            code = None
        return self._fail("crash", f"ended (exit status {code}) {doing}" if code is not None
                          else f"closed its output {doing}")

    def _process(self) -> _Process:
        """The bot's process: its own in a game; else one kept from an earlier game of the
        command (one that wrote since is a forfeit), else a new one, greeted."""
        proc = self._proc
        if proc is not None:
            if not proc.alive():   # it ended after its last answer
                raise self._ended(proc, "in the middle of the game")
            return proc
        idle = _IDLE.get(self._key(), [])
        while idle:
            proc = idle.pop()
            try:
                wrote = proc.alive() and proc.pending()
            except EOFError:
                wrote = None
            if wrote is None or not proc.alive():   # ended between games: start another
                proc.kill()
                continue
            self._proc, self.bot_name = proc, proc.name
            if wrote:
                raise self._unasked(proc, "after its last game")
            return proc
        try:
            self._proc = _Process(self.argv, self.cwd)
        except OSError as err:
            raise BotFailure(f"bot {self.name!r} could not be started: {err}", agent=self.name,
                             kind="start", seat=self._seat) from None
        self._proc.name = self.bot_name = self._exchange(
            protocol.hello(), time.perf_counter() + self.start_time, protocol.read_hello,
            "answer the greeting", f"did not answer the greeting within {self.start_time:g} s")
        return self._proc

    def _exchange(self, message: dict[str, Any], deadline: float, read: Any, asked: str,
                  late: str) -> Any:
        """Send ``message``, read the answer by ``deadline`` with ``read``; ``asked``: what the
        bot had to do, ``late``: the failure's words when it did not in time. Exactly one line
        is the answer: one before it, or more after it, is an ``output`` forfeit."""
        proc = self._proc
        assert proc is not None
        try:
            if proc.pending():
                raise self._unasked(proc, f"(it came before {message['type']})")
            self._write(proc, message)
            line = proc.read_line(deadline, self.max_line)
            if self.transcript is not None:
                self.transcript.write(f"< {line}\n")
                self.transcript.flush()
        except TimeoutError:
            raise self._fail("timeout", late) from None
        except (EOFError, BrokenPipeError, ConnectionResetError):
            raise self._ended(proc, f"instead of having to {asked}") from None
        except LineTooLong:
            raise self._fail("output", f"wrote a line over {self.max_line} bytes") from None
        try:
            answer = read(line)
        except protocol.ProtocolError as err:
            if self._more_output(proc, min(deadline, time.perf_counter() + 0.5)):
                # the line was not its answer: one it wrote before (to new_game, events, ...)
                raise self._unasked(proc, f"(it came before its answer to {message['type']})",
                                    line) from None
            raise self._fail(err.kind, f"broke the protocol: {err}") from None
        if self._more_output(proc, 0.0):
            raise self._unasked(proc, f"(it came after its answer to {message['type']})")
        return answer

    @staticmethod
    def _more_output(proc: _Process, until: float) -> bool:
        """Whether the bot writes anything more by ``until`` (``perf_counter``)."""
        while True:
            try:
                if proc.pending():
                    return True
            except EOFError:
                return False
            left = until - time.perf_counter()
            if left <= 0:
                return False
            select.select([proc.out], [], [], left)

    def _write(self, proc: _Process, message: dict[str, Any]) -> None:
        if self.transcript is not None:
            self.transcript.write("> " + json.dumps(message, separators=(",", ":")) + "\n")
        proc.send(message)

    def _send(self, message: dict[str, Any], check: bool = True) -> None:
        """Send a message that asks for no answer; ``check``: first make sure the bot wrote
        nothing since its last answer (every line it writes is accounted for)."""
        proc = self._process()
        try:
            if check and proc.pending():
                raise self._unasked(proc, f"(it came before {message['type']})")
            self._write(proc, message)
        except EOFError:
            raise self._ended(proc, f"before {message['type']}") from None
        except (BrokenPipeError, ConnectionResetError):
            raise self._fail("crash", "ended while being told of the game") from None

    # ------------------------------------------------------------------ one game
    def reset(self) -> None:
        """A new game: the clock is set again; the bot hears of it at its first message."""
        self._clock = self.game_time
        self._game, self._seat, self._cursor, self._started = None, None, 0, False

    def _start(self, seat: int, rules: Rules) -> None:
        if self._started:
            return
        self._games += 1
        self._seat = seat
        self._send(protocol.new_game(seat, rules, self.seed, self._games))
        self._started = True

    def attach(self, game: Game, seat: int) -> None:
        """Follow ``game`` from ``seat`` (:func:`agents.arena.run_game` calls it): the bot is
        told of the events the seat sees before each decision and of the end."""
        if self._game is game:
            return
        self._game, self._cursor = game, 0
        self._start(seat, game.rules)

    def _flush_events(self, check: bool = True) -> None:
        game = self._game
        if game is not None and self._cursor < len(game.events):
            events = protocol.seat_events(game.events[self._cursor:], self._seat)
            self._cursor = len(game.events)
            self._send({"type": "events", "events": events}, check)

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        if not self._started:
            self._start(view.seat, Rules(num_players=view.num_players, target=view.target))
        self._flush_events()
        if self._clock <= 0:
            raise self._fail("timeout", f"ran out of its {self.game_time:g} s a game")
        start = time.perf_counter()
        late = (f"did not answer a decision within {self.move_time:g} s"
                if self.move_time <= self._clock else
                f"ran out of its {self.game_time:g} s a game")
        card = self._exchange(protocol.decide(view, legal, self._clock),
                              start + min(self.move_time, self._clock),
                              lambda line: protocol.read_card(line, legal), "answer a decision",
                              late)
        self._clock -= time.perf_counter() - start
        return card

    def finish(self, game: Game, forfeit: dict[str, Any] | None = None) -> None:
        """The game is over: tell the bot (the events it has not heard, the scores, the winner,
        any forfeit) and keep its process for the next game of the same command. A line it
        wrote since its last answer is left to be found then (an ``output`` forfeit)."""
        if self._game is not game or self._proc is None:
            return
        try:
            self._flush_events(check=False)
            self._send(protocol.game_over(list(game.scores), _winner(game, forfeit), forfeit),
                       check=False)
            if self.transcript is not None:
                self.transcript.flush()
        except (BotFailure, OSError):
            if self._proc is not None:
                self._proc.kill()
        else:
            _IDLE.setdefault(self._key(), []).append(self._proc)
        self._proc, self._game, self._started = None, None, False

    def close(self) -> None:
        """Stop the program, and those of the same command kept between games: each is told to
        quit, and its process group is killed after :data:`QUIT_GRACE` seconds."""
        procs = _IDLE.pop(self._key(), [])
        if self._proc is not None:
            procs.append(self._proc)
            self._proc = None
        quit_all(procs)


def _winner(game: Game, forfeit: dict[str, Any] | None) -> int | None:
    """The winning side: the game's, or after a forfeit the side that wins by it (as
    :func:`agents.arena.play_game` scores it: the other side ahead, the lower on a tie)."""
    if forfeit is None:
        return game.winner
    rules = game.rules
    loser = rules.side_of(forfeit["seat"])
    return max((s for s in range(rules.num_sides) if s != loser),
               key=lambda s: (game.scores[s], -s))


_CLOCKS = {"move": "move_time", "game": "game_time", "start": "start_time"}


def parse_clocks(arg: str) -> tuple[str, dict[str, float]]:
    """``"[move=2,game=60]COMMAND"`` (what ``cmd[move=2,game=60]:COMMAND`` hands the factory)
    -> ``(COMMAND, {"move_time": 2.0, "game_time": 60.0})``; no brackets, no options.

    >>> parse_clocks("[move=0.5]python bot.py")
    ('python bot.py', {'move_time': 0.5})
    """
    if not arg.startswith("["):
        return arg, {}
    inside, _, command = arg[1:].partition("]")
    options: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in inside.split(","))):
        key, eq, value = part.partition("=")
        if not eq or key not in _CLOCKS:
            raise ValueError(f"cmd option {part!r}: expected move=S, game=S or start=S "
                             f"(seconds), as in cmd[move=2,game=60]:python my_bot.py")
        try:
            options[_CLOCKS[key]] = _positive(float(value), f"cmd option {key}")
        except ValueError:
            raise ValueError(f"cmd option {key}={value!r}: expected a positive number of "
                             "seconds") from None
    return command, options


def _make(spec: BotSpec, seed: int | None = None, **kwargs: Any) -> ExternalBot:
    return ExternalBot(spec.arg, seed=seed, **{**spec.options, **kwargs})


register_agent("cmd", _make, read=parse_clocks)
