"""Chakra execution traces (MLCommons ``et_def.proto``, the workload format of ASTRA-sim 2.0): a validating
reader and a writer.

Format: one file per rank, ``PREFIX.0.et``, ``PREFIX.1.et``, ... (``PREFIX`` is ``DIR/NAME``, ASTRA-sim's
``--workload-configuration``), each plain or gzip-compressed (recognised by its magic bytes, whatever the
name; ``PREFIX.N.et.gz`` is found too). A file is a sequence of protobuf messages, each preceded by its
length as a varint: a ``GlobalMetadata`` first, then ``Node`` messages.

Schema: the ``protobuf`` runtime with a schema of our own, built as a ``FileDescriptorProto`` in a private
descriptor pool. It needs no protoc and no generated code (which ties a checkout to one protobuf release),
and it holds only the fields read here, with the field numbers and wire types of ``et_def.proto``; the
other fields are skipped as unknown. The ``mlc-chakra`` package would give the generated classes, but it
pulls in converters and their heavy dependencies for what is a few dozen lines of schema.

Attributes read (any other, such as ``is_cpu_op`` or ``num_ops``, is ignored): ``comm_type`` (the
``CollectiveCommType`` value), ``comm_size``, ``comm_src``, ``comm_dst`` and ``comm_tag`` as integers in
whichever of ``int64_val``, ``uint64_val``, ``int32_val`` or ``uint32_val`` is set (writers differ);
``involved_dim`` as a ``bool_list``; ``pg_name`` as a ``string_val``. ``comm_type`` is kept on
``COMM_COLL_NODE``s only: ASTRA-sim reads it nowhere else, and the MSCCL converter writes the node type
there on sends (5) and receives (6), which would read as BROADCAST and ALL_TO_ALL.

Every problem is an InputError naming the file and, where there is one, the node id and the field; all of
these are checked before ``read_chakra`` returns: no file for the prefix, a missing rank, a truncated or
malformed message (with its index and byte offset), no GlobalMetadata, a duplicate node id, an attribute
given twice or with the wrong value kind, a dependency on an absent node, a dependency cycle, an unknown
node type, a ``COMM_COLL_NODE`` without a known ``comm_type``, a missing or non-positive ``comm_size`` on a
communication node (or a non-positive one anywhere), a send without ``comm_dst`` or a receive without
``comm_src``, a peer outside the ranks, a send or receive without ``comm_tag``, and a send without its
receive (or the reverse): sends and receives must pair up as multisets of (src, dst, tag, size).
"""

import gzip
import heapq
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from wormhole_lab.errors import InputError

__all__ = [
    "ChakraNode",
    "ChakraTrace",
    "CollectiveType",
    "NodeType",
    "RankTrace",
    "chakra_files",
    "read_chakra",
    "write_chakra",
]


class NodeType(IntEnum):
    """``NodeType`` of et_def.proto."""

    INVALID_NODE = 0
    METADATA_NODE = 1
    MEM_LOAD_NODE = 2
    MEM_STORE_NODE = 3
    COMP_NODE = 4
    COMM_SEND_NODE = 5
    COMM_RECV_NODE = 6
    COMM_COLL_NODE = 7
    STORAGE_NODE = 8
    BATCH_NODE = 9
    CHECKPOINT_NODE = 10


class CollectiveType(IntEnum):
    """``CollectiveCommType`` of et_def.proto."""

    ALL_REDUCE = 0
    REDUCE = 1
    ALL_GATHER = 2
    GATHER = 3
    SCATTER = 4
    BROADCAST = 5
    ALL_TO_ALL = 6
    REDUCE_SCATTER = 7
    REDUCE_SCATTER_BLOCK = 8
    BARRIER = 9


@dataclass(frozen=True, slots=True)
class ChakraNode:
    """One node of a rank's trace; the attributes not given in the file are None."""

    id: int
    name: str
    type: NodeType
    data_deps: tuple[int, ...] = ()
    ctrl_deps: tuple[int, ...] = ()
    duration_micros: int = 0
    comm_type: CollectiveType | None = None
    comm_size: int | None = None
    involved_dim: tuple[bool, ...] | None = None
    pg_name: str | None = None
    comm_src: int | None = None
    comm_dst: int | None = None
    comm_tag: int | None = None

    @property
    def deps(self) -> tuple[int, ...]:
        """The nodes this one waits for: data_deps then ctrl_deps, each once, in order."""
        return tuple(dict.fromkeys(self.data_deps + self.ctrl_deps))


@dataclass(frozen=True)
class RankTrace:
    """The nodes of one rank's file, in file order, and the schema version its GlobalMetadata states."""

    rank: int
    path: Path
    version: str
    nodes: tuple[ChakraNode, ...]

    @cached_property
    def _by_id(self) -> dict[int, ChakraNode]:
        return {node.id: node for node in self.nodes}

    def node(self, node_id: int) -> ChakraNode:
        """The node with id ``node_id`` (KeyError if there is none)."""
        return self._by_id[node_id]


@dataclass(frozen=True)
class ChakraTrace:
    """All ranks of a trace; ``ranks[i].rank == i``."""

    prefix: Path
    ranks: tuple[RankTrace, ...]

    @property
    def n_ranks(self) -> int:
        return len(self.ranks)

    def counts(self, rank: int | None = None) -> dict[str, int]:
        """Nodes per NodeType name, over all ranks or of one rank, in NodeType order (types present only)."""
        ranks = self.ranks if rank is None else (self.ranks[rank],)
        counted = Counter(node.type for trace in ranks for node in trace.nodes)
        return {kind.name: counted[kind] for kind in NodeType if counted[kind]}


# --- the schema: the used part of et_def.proto, same field numbers and wire types -------------------------

_PACKAGE = "wormhole_lab.chakra"  # not et_def's "ChakraProtoMsg", so mlc-chakra may be loaded beside it


def _message_classes() -> dict[str, type]:
    F = descriptor_pb2.FieldDescriptorProto
    schema = descriptor_pb2.FileDescriptorProto(name="wormhole_lab_chakra.proto", package=_PACKAGE, syntax="proto3")

    def message(name: str, fields: list[tuple], oneof: str | None = None) -> None:
        described = schema.message_type.add(name=name)
        if oneof:
            described.oneof_decl.add(name=oneof)
        for field_name, number, kind, repeated, in_oneof in fields:
            field = described.field.add(name=field_name, number=number, json_name=field_name)
            field.label = F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL
            if isinstance(kind, str):  # a message type of this schema
                field.type, field.type_name = F.TYPE_MESSAGE, f".{_PACKAGE}.{kind}"
            else:
                field.type = kind
            if in_oneof:
                field.oneof_index = 0

    message("BoolList", [("values", 1, F.TYPE_BOOL, True, False)])
    message(
        "AttributeProto",
        [
            ("name", 1, F.TYPE_STRING, False, False),
            ("int32_val", 7, F.TYPE_INT32, False, True),
            ("int64_val", 9, F.TYPE_INT64, False, True),
            ("uint32_val", 11, F.TYPE_UINT32, False, True),
            ("uint64_val", 13, F.TYPE_UINT64, False, True),
            ("bool_val", 27, F.TYPE_BOOL, False, True),
            ("bool_list", 28, "BoolList", False, True),
            ("string_val", 29, F.TYPE_STRING, False, True),
        ],
        oneof="value",
    )
    message("GlobalMetadata", [("version", 1, F.TYPE_STRING, False, False), ("attr", 2, "AttributeProto", True, False)])
    message(
        "Node",
        [
            ("id", 1, F.TYPE_UINT64, False, False),
            ("name", 2, F.TYPE_STRING, False, False),
            # the enum NodeType on the wire; an int32 keeps a value outside our NodeType for the error message
            ("type", 3, F.TYPE_INT32, False, False),
            ("ctrl_deps", 4, F.TYPE_UINT64, True, False),
            ("data_deps", 5, F.TYPE_UINT64, True, False),
            ("duration_micros", 7, F.TYPE_UINT64, False, False),
            ("attr", 10, "AttributeProto", True, False),
        ],
    )
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(schema.SerializeToString())
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
        for name in ("GlobalMetadata", "Node")
    }


_CLASSES = _message_classes()
_GlobalMetadata, _Node = _CLASSES["GlobalMetadata"], _CLASSES["Node"]

_INT_KINDS = ("int64_val", "uint64_val", "int32_val", "uint32_val")  # accepted for an integer attribute
_INT_ATTRS = ("comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag")
_ATTR_KINDS = {**dict.fromkeys(_INT_ATTRS, _INT_KINDS), "involved_dim": ("bool_list",), "pg_name": ("string_val",)}
_VALID_TYPES = ", ".join(f"{kind.value} {kind.name}" for kind in NodeType if kind)
_VALID_COLLECTIVES = ", ".join(f"{kind.value} {kind.name}" for kind in CollectiveType)
_TRACE_FIX = "give the trace files as Chakra's converters write them (length-prefixed protobuf messages)"
_GZIP_MAGIC = b"\x1f\x8b"
_RANK_SUFFIX = r"\.(\d+)\.et(?:\.gz)?"


# --- files ------------------------------------------------------------------------------------------------


def chakra_files(prefix: str | Path) -> list[Path]:
    """The files ``PREFIX.N.et`` (or ``PREFIX.N.et.gz``) of a trace, indexed by rank; an InputError if there
    is none, if a rank between 0 and the highest is missing, or if a rank has two files."""
    prefix = Path(prefix)
    folder, name = prefix.parent, prefix.name
    pattern = re.compile(re.escape(name) + _RANK_SUFFIX)
    entries = sorted(folder.iterdir()) if folder.is_dir() else []
    found: dict[int, Path] = {}
    for path in entries:
        match = pattern.fullmatch(path.name)
        if not match:
            continue
        rank = int(match[1])
        if rank in found:
            raise InputError(
                str(path), f"rank {rank} has two files, {found[rank].name} and {path.name}", "keep one of them"
            )
        found[rank] = path
    if not found:
        others = sorted({match[1] for path in entries if (match := re.fullmatch(r"(.+)" + _RANK_SUFFIX, path.name))})
        if others:
            fix = f"trace prefixes in {folder}: " + ", ".join(str(folder / other) for other in others[:5])
        else:
            fix = "give DIR/NAME for the files DIR/NAME.0.et, DIR/NAME.1.et, ... (ASTRA-sim's workload form)"
        problem = f"no file {name}.N.et or {name}.N.et.gz in {folder}"
        if not folder.is_dir():
            problem = f"no folder {folder}, so no file {name}.N.et or {name}.N.et.gz"
        raise InputError(str(prefix), problem, fix)
    missing = next((rank for rank in range(max(found) + 1) if rank not in found), None)
    if missing is not None:
        raise InputError(
            str(prefix),
            f"rank {missing} is missing: there is no {name}.{missing}.et, but ranks up to {max(found)} have files",
            "a trace has one file for each rank 0 .. N-1",
        )
    return [found[rank] for rank in range(len(found))]


def _file_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(str(path), f"cannot read the trace file ({exc.strerror})", "check the permissions") from None
    if data[:2] != _GZIP_MAGIC:
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(str(path), f"the file starts as gzip but does not decompress ({exc})", _TRACE_FIX) from None


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it; ValueError if it runs off the end or past 10 bytes."""
    value = shift = 0
    for i in range(pos, min(pos + 10, len(data))):
        byte = data[i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i + 1
        shift += 7
    raise ValueError("the file ends inside it (truncated)" if len(data) < pos + 10 else "it is longer than 10 bytes")


def _messages(path: Path, data: bytes):
    """(index, byte offset, bytes) of each length-prefixed message."""
    pos, index = 0, 0
    while pos < len(data):
        try:
            length, start = _varint(data, pos)
        except ValueError as exc:
            where = f"{path}: message {index} (byte {pos})"
            raise InputError(where, f"the message's length prefix is not a varint: {exc}", _TRACE_FIX) from None
        if start + length > len(data):
            raise InputError(
                f"{path}: message {index} (byte {pos})",
                f"the message has {length} bytes but only {len(data) - start} remain: truncated, or not a Chakra trace",
                _TRACE_FIX,
            )
        yield index, pos, data[start : start + length]
        pos, index = start + length, index + 1


def _looks_like_node(payload: bytes) -> bool:
    """Whether a message has a Node's id (1) or type (3) as varints: GlobalMetadata's field 1 is a string and
    it has no field 3. False for a message that is not well-formed (parsing it says so)."""
    pos = 0
    try:
        while pos < len(payload):
            key, pos = _varint(payload, pos)
            field, wire = key >> 3, key & 7
            if wire == 0:
                if field in (1, 3):
                    return True
                _, pos = _varint(payload, pos)
            elif wire == 2:
                length, pos = _varint(payload, pos)
                pos += length
            elif wire in (1, 5):  # 64-bit, 32-bit
                pos += 8 if wire == 1 else 4
            else:  # a group: neither message has one
                return False
    except ValueError:
        return False
    return False
    return False


def _parse(message_class: type, path: Path, index: int, offset: int, payload: bytes):
    message = message_class()
    try:
        message.ParseFromString(payload)
    except DecodeError as exc:
        what = message_class.DESCRIPTOR.name
        raise InputError(
            f"{path}: message {index} (byte {offset})", f"not a valid {what} ({exc})", _TRACE_FIX
        ) from None
    return message


# --- reading ----------------------------------------------------------------------------------------------


def read_chakra(prefix: str | Path) -> ChakraTrace:
    """The trace ``PREFIX.0.et``, ``PREFIX.1.et``, ... (``prefix`` as ``DIR/NAME``), fully checked."""
    prefix = Path(prefix)
    files = chakra_files(prefix)
    ranks = tuple(_read_rank(rank, path, len(files)) for rank, path in enumerate(files))
    _check_pairs(ranks)
    return ChakraTrace(prefix, ranks)


def _version(metadata) -> str:
    """GlobalMetadata.version; where it is empty, the ``schema`` attribute (the MSCCL converter writes the
    version only there, as "1.0.2-chakra.0.0.4"); else ""."""
    if metadata.version:
        return metadata.version
    return next((attr.string_val for attr in metadata.attr if attr.name == "schema"), "")


def _read_rank(rank: int, path: Path, n_ranks: int) -> RankTrace:
    messages = _messages(path, _file_bytes(path))
    first = next(messages, None)
    if first is None:
        raise InputError(f"{path}: message 0 (byte 0)", "the file is empty: no GlobalMetadata", _TRACE_FIX)
    if _looks_like_node(first[2]):
        raise InputError(
            f"{path}: message 0 (byte 0)",
            "the first message is a Node, not the GlobalMetadata",
            "write a GlobalMetadata (with the schema version) before the nodes, as Chakra's converters do",
        )
    metadata = _parse(_GlobalMetadata, path, *first)
    nodes: list[ChakraNode] = []
    index_of: dict[int, int] = {}
    for index, offset, payload in messages:
        node = _node(_parse(_Node, path, index, offset, payload), rank, path, n_ranks)
        if node.id in index_of:
            raise InputError(
                f"{path}: node {node.id} id",
                f"node id {node.id} is used twice (messages {index_of[node.id]} and {index})",
                "give every node of a rank its own id",
            )
        index_of[node.id] = index
        nodes.append(node)
    for node in nodes:
        for field in ("data_deps", "ctrl_deps"):
            for dep in getattr(node, field):
                if dep not in index_of:
                    raise InputError(
                        f"{path}: node {node.id} {field}",
                        f"depends on node {dep}, which is not in this file",
                        "dependencies name nodes of the same rank's file",
                    )
    _check_acyclic(path, nodes)
    return RankTrace(rank, path, _version(metadata), tuple(nodes))


def _attributes(message, where: str) -> dict:
    """The attributes this reader uses, by name, each checked for its value kind."""
    values = {}
    for attr in message.attr:
        name = attr.name
        kinds = _ATTR_KINDS.get(name)
        if kinds is None:
            continue
        if name in values:
            raise InputError(f"{where} {name}", f"the attribute {name} is given twice", "give it once")
        kind = attr.WhichOneof("value")
        if kind not in kinds:
            found = f"is given as {kind}" if kind else "has no value of a kind this reader knows"
            raise InputError(f"{where} {name}", f"{name} {found}", f"give {name} as {' or '.join(kinds)}")
        values[name] = tuple(attr.bool_list.values) if kind == "bool_list" else getattr(attr, kind)
    return values


_COMM_TYPES = (NodeType.COMM_SEND_NODE, NodeType.COMM_RECV_NODE, NodeType.COMM_COLL_NODE)
# for sends and receives, the attribute naming the peer and the one that, if given, must be the node's own rank
_PEER = {NodeType.COMM_SEND_NODE: ("comm_dst", "comm_src"), NodeType.COMM_RECV_NODE: ("comm_src", "comm_dst")}


def _node(message, rank: int, path: Path, n_ranks: int) -> ChakraNode:
    where = f"{path}: node {message.id}"
    try:
        node_type = NodeType(message.type)
    except ValueError:
        node_type = None
    if node_type is None or node_type == NodeType.INVALID_NODE:
        problem = (
            "node type 0 (INVALID_NODE: not set)" if node_type is not None else f"unknown node type {message.type}"
        )
        raise InputError(f"{where} type", problem, f"one of {_VALID_TYPES}")
    attrs = _attributes(message, where)
    comm_type = None
    if node_type == NodeType.COMM_COLL_NODE:
        if "comm_type" not in attrs:
            raise InputError(f"{where} comm_type", "a COMM_COLL_NODE without comm_type", f"one of {_VALID_COLLECTIVES}")
        try:
            comm_type = CollectiveType(attrs["comm_type"])
        except ValueError:
            raise InputError(
                f"{where} comm_type", f"unknown collective type {attrs['comm_type']}", f"one of {_VALID_COLLECTIVES}"
            ) from None
    size = attrs.get("comm_size")
    if size is None and node_type in _COMM_TYPES:
        raise InputError(f"{where} comm_size", f"a {node_type.name} without comm_size", "give its size in bytes")
    if size is not None and size <= 0:
        raise InputError(f"{where} comm_size", f"comm_size is {size}", "a size in bytes, 1 or more")
    if node_type in _PEER:
        _check_peer(attrs, node_type, rank, n_ranks, where)
    return ChakraNode(
        id=message.id,
        name=message.name,
        type=node_type,
        data_deps=tuple(message.data_deps),
        ctrl_deps=tuple(message.ctrl_deps),
        duration_micros=message.duration_micros,
        comm_type=comm_type,
        comm_size=size,
        involved_dim=attrs.get("involved_dim"),
        pg_name=attrs.get("pg_name"),
        comm_src=attrs.get("comm_src"),
        comm_dst=attrs.get("comm_dst"),
        comm_tag=attrs.get("comm_tag"),
    )


def _check_peer(attrs: dict, node_type: NodeType, rank: int, n_ranks: int, where: str) -> None:
    peer, own = _PEER[node_type]
    if peer not in attrs:
        raise InputError(f"{where} {peer}", f"a {node_type.name} without {peer}", f"the peer rank, 0 to {n_ranks - 1}")
    if not 0 <= attrs[peer] < n_ranks:
        raise InputError(
            f"{where} {peer}", f"{peer} is rank {attrs[peer]}, but the trace has ranks 0 to {n_ranks - 1}", "a rank"
        )
    if own in attrs and attrs[own] != rank:
        raise InputError(
            f"{where} {own}", f"{own} is {attrs[own]} on a {node_type.name} of rank {rank}", f"{rank}, or leave it out"
        )
    if "comm_tag" not in attrs:
        raise InputError(f"{where} comm_tag", f"a {node_type.name} without comm_tag", "the tag its peer's node has")


def issue_order(nodes: Sequence[ChakraNode]) -> list[int]:
    """Node ids in the order ASTRA-sim issues them when each waits only for its dependencies: Kahn's order, the
    smallest ready id first (its ``issue_dep_free_nodes`` visits a std::set). Nodes on or behind a cycle are left
    out."""
    waiting = {node.id: len(node.deps) for node in nodes}
    dependents = defaultdict(list)
    for node in nodes:
        for dep in node.deps:
            dependents[dep].append(node.id)
    ready = [node_id for node_id, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        node_id = heapq.heappop(ready)
        order.append(node_id)
        for child in dependents.get(node_id, ()):
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
    return order


def _check_acyclic(path: Path, nodes: list[ChakraNode]) -> None:
    """A node left out of ``issue_order`` lies on or behind a cycle, which is reported."""
    stuck = {node.id for node in nodes} - set(issue_order(nodes))
    if not stuck:
        return
    by_id = {node.id: node for node in nodes}
    # every stuck node waits for a stuck node, so following those from any of them must come back around
    walk, seen_at = [], {}
    node_id = next(node.id for node in nodes if node.id in stuck)
    while node_id not in seen_at:
        seen_at[node_id] = len(walk)
        walk.append(node_id)
        node_id = next(dep for dep in by_id[node_id].deps if dep in stuck)
    cycle = walk[seen_at[node_id] :] + [node_id]
    field = "data_deps" if cycle[1] in by_id[cycle[0]].data_deps else "ctrl_deps"
    raise InputError(
        f"{path}: node {cycle[0]} {field}",
        "dependency cycle: " + " -> ".join(f"node {i}" for i in cycle) + " (each waits for the next)",
        "remove one of these dependencies",
    )


def _check_pairs(ranks: tuple[RankTrace, ...]) -> None:
    """Sends and receives pair up as multisets of (src, dst, tag, size); the first one left over is reported."""
    sends, recvs = [], []
    for trace in ranks:
        for node in trace.nodes:
            if node.type == NodeType.COMM_SEND_NODE:
                sends.append(((trace.rank, node.comm_dst, node.comm_tag, node.comm_size), trace, node))
            elif node.type == NodeType.COMM_RECV_NODE:
                recvs.append(((node.comm_src, trace.rank, node.comm_tag, node.comm_size), trace, node))
    for items, partners, field, what, other in (
        (sends, Counter(key for key, _, _ in recvs), "comm_dst", "send", "receive"),
        (recvs, Counter(key for key, _, _ in sends), "comm_src", "receive", "send"),
    ):
        for key, trace, node in items:
            if partners[key]:
                partners[key] -= 1
                continue
            src, dst, tag, size = key
            peer = dst if what == "send" else src
            raise InputError(
                f"{trace.path}: node {node.id} {field}",
                f"this {what} of {size} bytes from rank {src} to rank {dst} with tag {tag} has no matching {other}",
                f"give rank {peer} a {other} with the same ranks, comm_tag and comm_size for each such {what}",
            )


# --- writing ----------------------------------------------------------------------------------------------


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def write_chakra(
    prefix: str | Path,
    ranks: Sequence[Sequence[ChakraNode]],
    version: str = "0.0.4",
    int_kind: str = "int64",
    compress: bool = False,
) -> list[Path]:
    """Write ``PREFIX.N.et`` (``.et.gz`` with ``compress``) for each rank N, unchecked, so that broken traces
    can be made too. ``int_kind`` ("int64", "uint64", "int32" or "uint32") picks the AttributeProto field of
    the integer attributes. Refuses to leave other files of the same prefix beside the new ones."""
    if f"{int_kind}_val" not in _INT_KINDS:
        raise InputError("write_chakra int_kind", f"unknown int_kind {int_kind!r}", "int64, uint64, int32 or uint32")
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    suffix = ".et.gz" if compress else ".et"
    paths = [prefix.parent / f"{prefix.name}.{rank}{suffix}" for rank in range(len(ranks))]
    pattern = re.compile(re.escape(prefix.name) + _RANK_SUFFIX)
    stale = [path for path in sorted(prefix.parent.iterdir()) if pattern.fullmatch(path.name) and path not in paths]
    if stale:
        raise InputError(str(stale[0]), "an older file of this trace would be read with the new ones", "remove it")
    int_field = f"{int_kind}_val"
    metadata = _GlobalMetadata(version=version).SerializeToString()
    for path, nodes in zip(paths, ranks, strict=True):
        chunks = [_varint_bytes(len(metadata)), metadata]
        for node in nodes:
            payload = _node_message(node, int_field).SerializeToString()
            chunks += [_varint_bytes(len(payload)), payload]
        data = b"".join(chunks)
        path.write_bytes(gzip.compress(data, mtime=0) if compress else data)  # mtime 0: the same bytes each time
    return paths


def _node_message(node: ChakraNode, int_field: str):
    message = _Node(id=node.id, name=node.name, type=int(node.type), duration_micros=node.duration_micros)
    message.data_deps.extend(node.data_deps)
    message.ctrl_deps.extend(node.ctrl_deps)
    for name in _INT_ATTRS:
        value = getattr(node, name)
        if value is not None:
            message.attr.add(name=name, **{int_field: int(value)})
    if node.involved_dim is not None:
        message.attr.add(name="involved_dim").bool_list.values.extend(node.involved_dim)
    if node.pg_name is not None:
        message.attr.add(name="pg_name", string_val=node.pg_name)
    return message
