"""Chakra execution traces: the public samples read with their exact contents, the writer's variants read back
equal, and every bad input fails naming the file, the node and the field."""

import gzip
import time
from dataclasses import replace
from pathlib import Path

import pytest

from wormhole_lab.errors import InputError
from wormhole_lab.workload.chakra import (
    ChakraNode,
    CollectiveType,
    NodeType,
    chakra_files,
    read_chakra,
    write_chakra,
)

CHAKRA = (Path(__file__).resolve().parents[2] / ".." / "shared" / "workloads" / "chakra").resolve()
RING = CHAKRA / "custom_collectives" / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce"
needs_samples = pytest.mark.skipif(
    not CHAKRA.is_dir(), reason=f"the public Chakra sample traces are not at {CHAKRA} (shared/workloads/chakra)"
)

SEND, RECV, COMP, COLL = NodeType.COMM_SEND_NODE, NodeType.COMM_RECV_NODE, NodeType.COMP_NODE, NodeType.COMM_COLL_NODE
MB = 1_048_576


# --- the public samples -----------------------------------------------------------------------------------


@needs_samples
@pytest.mark.parametrize("npus", [4, 8, 16])
@pytest.mark.parametrize(
    "name, collective",
    [
        ("all_reduce", CollectiveType.ALL_REDUCE),
        ("all_gather", CollectiveType.ALL_GATHER),
        ("reduce_scatter", CollectiveType.REDUCE_SCATTER),
        ("all_to_all", CollectiveType.ALL_TO_ALL),
    ],
)
def test_microbenchmark_is_one_collective_per_rank(name, collective, npus):
    trace = read_chakra(CHAKRA / "microbenchmarks" / name / f"{npus}npus_1MB" / name)
    assert trace.n_ranks == npus and [rank.rank for rank in trace.ranks] == list(range(npus))
    assert trace.counts() == {"COMM_COLL_NODE": npus}
    for rank in trace.ranks:
        assert rank.version == "0.0.4"
        # the whole node: id = rank, no dependencies, no duration, no involved_dim / pg_name / peers
        assert rank.nodes == (
            ChakraNode(rank.rank, f"{name}_{npus}npus_1MB", COLL, comm_type=collective, comm_size=MB),
        )


@needs_samples
def test_custom_ring_allreduce_sends_to_the_next_rank_and_receives_from_the_previous():
    trace = read_chakra(RING)
    assert trace.n_ranks == 8
    assert trace.counts() == {"COMP_NODE": 56, "COMM_SEND_NODE": 112, "COMM_RECV_NODE": 112}
    for rank in trace.ranks:
        r = rank.rank
        assert rank.version == "1.0.2-chakra.0.0.4"  # from the GlobalMetadata's "schema" attribute
        assert trace.counts(r) == {"COMP_NODE": 7, "COMM_SEND_NODE": 14, "COMM_RECV_NODE": 14}
        # ids 0..34 in one chain: reduce-scatter steps send, receive, reduce; all-gather steps send, receive
        assert [node.id for node in rank.nodes] == list(range(35))
        assert [node.deps for node in rank.nodes] == [()] + [(i,) for i in range(34)]
        letters = {SEND: "s", RECV: "r", COMP: "c"}
        assert "".join(letters[node.type] for node in rank.nodes) == "src" * 7 + "sr" * 7
        sends = {(n.comm_dst, n.comm_src, n.comm_tag, n.comm_size, n.comm_type) for n in rank.nodes if n.type == SEND}
        recvs = {(n.comm_src, n.comm_dst, n.comm_tag, n.comm_size, n.comm_type) for n in rank.nodes if n.type == RECV}
        assert sends == {((r + 1) % 8, None, 0, MB // 8, None)}  # the file's comm_type 5 on sends is not kept
        assert recvs == {((r - 1) % 8, None, 0, MB // 8, None)}
        assert {(n.duration_micros, n.comm_size) for n in rank.nodes if n.type == COMP} == {(7, None)}
        assert rank.node(2).name == "COMP_NODE_tb0_step1"


# --- the writer: variants and round trips -----------------------------------------------------------------


def _nodes(trace):
    return [list(rank.nodes) for rank in trace.ranks]


@needs_samples
def test_int64_and_uint64_attributes_read_the_same(tmp_path):
    for source in (RING, CHAKRA / "microbenchmarks" / "all_reduce" / "4npus_1MB" / "all_reduce"):
        ranks = _nodes(read_chakra(source))
        traces = {}
        for kind in ("int64", "uint64"):
            write_chakra(tmp_path / kind / source.name, ranks, int_kind=kind)
            traces[kind] = read_chakra(tmp_path / kind / source.name)
            assert _nodes(traces[kind]) == ranks
        # the two really differ on the wire: comm_size as int64_val (field 9) or uint64_val (field 13)
        int64 = (tmp_path / "int64" / f"{source.name}.0.et").read_bytes()
        uint64 = (tmp_path / "uint64" / f"{source.name}.0.et").read_bytes()
        assert b"\x0a\x09comm_size\x48" in int64 and b"\x0a\x09comm_size\x68" in uint64
        assert b"\x0a\x09comm_size\x68" not in int64 and b"\x0a\x09comm_size\x48" not in uint64


def _mixed_trace():
    """Two ranks with every field the writer writes, a collective, a send/receive pair and both kinds of deps."""
    coll = ChakraNode(
        5, "ar", COLL, comm_type=CollectiveType.REDUCE_SCATTER_BLOCK, comm_size=3 * MB, involved_dim=(True, False)
    )
    return [
        [
            ChakraNode(0, "load", NodeType.MEM_LOAD_NODE),
            ChakraNode(1, "gemm", COMP, data_deps=(0,), duration_micros=1_234),
            ChakraNode(2, "send", SEND, data_deps=(1,), comm_size=4096, comm_dst=1, comm_tag=7, comm_src=0),
            replace(coll, data_deps=(2, 1), ctrl_deps=(1, 0), pg_name="tp0"),
        ],
        [
            ChakraNode(9, "recv", RECV, comm_size=4096, comm_src=0, comm_tag=7),
            replace(coll, ctrl_deps=(9,), pg_name="tp0"),
        ],
    ]


def test_write_then_read_gives_the_same_nodes(tmp_path):
    ranks = _mixed_trace()
    for kind in ("int64", "uint64", "int32", "uint32"):
        paths = write_chakra(tmp_path / kind / "mixed", ranks, version="0.0.4-test", int_kind=kind)
        assert paths == [tmp_path / kind / "mixed.0.et", tmp_path / kind / "mixed.1.et"]
        trace = read_chakra(tmp_path / kind / "mixed")
        assert _nodes(trace) == ranks
        assert [rank.version for rank in trace.ranks] == ["0.0.4-test"] * 2
        assert trace.ranks[0].node(5).deps == (2, 1, 0)  # data_deps then ctrl_deps, each once
    counts = {"MEM_LOAD_NODE": 1, "COMP_NODE": 1, "COMM_SEND_NODE": 1, "COMM_RECV_NODE": 1, "COMM_COLL_NODE": 2}
    assert trace.counts() == counts


def test_gzip_traces_are_read_by_name_and_by_magic_bytes(tmp_path):
    ranks = _mixed_trace()
    paths = write_chakra(tmp_path / "gz" / "mixed", ranks, compress=True)
    assert paths == [tmp_path / "gz" / "mixed.0.et.gz", tmp_path / "gz" / "mixed.1.et.gz"]
    assert paths[0].read_bytes()[:2] == b"\x1f\x8b"
    assert _nodes(read_chakra(tmp_path / "gz" / "mixed")) == ranks
    # gzip content under the plain name
    for path in write_chakra(tmp_path / "plain" / "mixed", ranks):
        path.write_bytes(gzip.compress(path.read_bytes()))
    assert _nodes(read_chakra(tmp_path / "plain" / "mixed")) == ranks


def test_writer_refuses_to_leave_an_older_rank_file_beside_the_new_ones(tmp_path):
    write_chakra(tmp_path / "t", _pair() + [[]])
    with pytest.raises(InputError) as info:
        write_chakra(tmp_path / "t", _pair())
    assert info.value.where == str(tmp_path / "t.2.et")


def test_a_thousand_ranks_read_in_seconds(tmp_path):
    n, steps = 1024, 16
    ranks = [
        [
            node
            for k in range(steps)
            for node in (
                ChakraNode(2 * k, "s", SEND, data_deps=(2 * k - 1,) if k else (), comm_size=64, comm_dst=(r + 1) % n),
                ChakraNode(2 * k + 1, "r", RECV, data_deps=(2 * k,), comm_size=64, comm_src=(r - 1) % n),
            )
        ]
        for r in range(n)
    ]
    ranks = [[replace(node, comm_tag=node.id // 2) for node in nodes] for nodes in ranks]
    write_chakra(tmp_path / "ring", ranks)
    started = time.perf_counter()
    trace = read_chakra(tmp_path / "ring")
    assert time.perf_counter() - started < 10  # about 0.3 s here; a quadratic check would take minutes
    assert trace.counts() == {"COMM_SEND_NODE": n * steps, "COMM_RECV_NODE": n * steps}


# --- bad inputs -------------------------------------------------------------------------------------------


def _pair(size=100, tag=3):
    """Rank 0 sends ``size`` bytes to rank 1, then computes; rank 1 receives them, then computes."""
    comp = ChakraNode(1, "comp", COMP, data_deps=(0,), duration_micros=5)
    return [
        [ChakraNode(0, "send", SEND, comm_size=size, comm_dst=1, comm_tag=tag), comp],
        [ChakraNode(0, "recv", RECV, comm_size=size, comm_src=0, comm_tag=tag), comp],
    ]


def _error(prefix) -> InputError:
    with pytest.raises(InputError) as info:
        read_chakra(prefix)
    return info.value


def _bad(tmp_path, ranks, **write_options) -> InputError:
    write_chakra(tmp_path / "t", ranks, **write_options)
    return _error(tmp_path / "t")


def _varint(value: int) -> bytes:
    out = b""
    while value > 0x7F:
        out += bytes([value & 0x7F | 0x80])
        value >>= 7
    return out + bytes([value])


def _split(path: Path) -> list[bytes]:
    """The length-prefixed messages of a well-formed file."""
    data, messages, pos = path.read_bytes(), [], 0
    while pos < len(data):
        length = shift = 0
        while True:
            byte, pos = data[pos], pos + 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        messages.append(data[pos : pos + length])
        pos += length
    return messages


def _join(path: Path, messages: list[bytes]) -> None:
    path.write_bytes(b"".join(_varint(len(message)) + message for message in messages))


def _attr(name: str, value_field: int, value: bytes) -> bytes:
    """A Node's ``attr`` field (10): an AttributeProto with ``name`` and one length-delimited or varint value."""
    key = value_field << 3 | (2 if value_field in (28, 29) else 0)
    body = b"\x0a" + _varint(len(name)) + name.encode() + _varint(key) + value
    return b"\x52" + _varint(len(body)) + body


def test_no_file_for_the_prefix(tmp_path):
    error = _error(tmp_path / "nothing")
    assert error.where == str(tmp_path / "nothing")
    assert f"no file nothing.N.et or nothing.N.et.gz in {tmp_path}" in error.problem
    write_chakra(tmp_path / "other", _pair())
    assert str(tmp_path / "other") in _error(tmp_path / "nothing").fix  # the prefixes that are there
    assert f"no folder {tmp_path / 'absent'}" in _error(tmp_path / "absent" / "nothing").problem


def test_missing_rank(tmp_path):
    write_chakra(tmp_path / "t", [[], [], [], []])
    (tmp_path / "t.2.et").unlink()
    error = _error(tmp_path / "t")
    assert error.where == str(tmp_path / "t") and "rank 2 is missing: there is no t.2.et" in error.problem


def test_two_files_for_one_rank(tmp_path):
    write_chakra(tmp_path / "t", [[], []])
    (tmp_path / "t.1.et.gz").write_bytes(gzip.compress((tmp_path / "t.1.et").read_bytes()))
    error = _error(tmp_path / "t")
    assert "rank 1 has two files, t.1.et and t.1.et.gz" in error.problem


def test_chakra_files_orders_by_rank_number(tmp_path):
    write_chakra(tmp_path / "t", [[]] * 12)
    assert [path.name for path in chakra_files(tmp_path / "t")] == [f"t.{rank}.et" for rank in range(12)]


def test_truncated_message(tmp_path):
    write_chakra(tmp_path / "t", _pair())
    path = tmp_path / "t.1.et"
    messages = _split(path)
    offset = sum(len(_varint(len(message))) + len(message) for message in messages[:2])
    path.write_bytes(path.read_bytes()[:-1])
    error = _error(tmp_path / "t")
    assert error.where == f"{path}: message 2 (byte {offset})"
    assert f"the message has {len(messages[2])} bytes but only {len(messages[2]) - 1} remain: truncated" in str(error)


def test_truncated_length_prefix(tmp_path):
    write_chakra(tmp_path / "t", [[]])
    (tmp_path / "t.0.et").write_bytes((tmp_path / "t.0.et").read_bytes() + b"\x80")
    error = _error(tmp_path / "t")
    assert error.where == f"{tmp_path / 't.0.et'}: message 1 (byte 8)"  # 8 = 1 + len(b"\x0a\x050.0.4")
    assert "length prefix is not a varint: the file ends inside it (truncated)" in error.problem


def test_bad_protobuf_and_bad_gzip(tmp_path):
    write_chakra(tmp_path / "t", _pair())
    path = tmp_path / "t.0.et"
    messages = _split(path)
    _join(path, messages[:2] + [b"\x08\xff"])  # field 1 (id) with a varint cut short
    error = _error(tmp_path / "t")
    assert error.where.startswith(f"{path}: message 2 (byte ") and "not a valid Node" in error.problem
    path.write_bytes(b"\x1f\x8b" + b"not gzip at all")
    error = _error(tmp_path / "t")
    assert error.where == str(path) and "does not decompress" in error.problem


def test_no_global_metadata(tmp_path):
    write_chakra(tmp_path / "t", _pair())
    path = tmp_path / "t.1.et"
    _join(path, _split(path)[1:])
    error = _error(tmp_path / "t")
    assert error.where == f"{path}: message 0 (byte 0)" and "is a Node, not the GlobalMetadata" in error.problem
    path.write_bytes(b"")
    assert "the file is empty: no GlobalMetadata" in _error(tmp_path / "t").problem


def test_duplicate_node_id(tmp_path):
    ranks = _pair()
    ranks[1][1] = replace(ranks[1][1], id=0)
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / 't.1.et'}: node 0 id" and "used twice (messages 1 and 2)" in error.problem


@pytest.mark.parametrize("field", ["data_deps", "ctrl_deps"])
def test_dependency_on_an_absent_node(tmp_path, field):
    ranks = _pair()
    ranks[0][1] = replace(ranks[0][1], **{field: (0, 9)})
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / 't.0.et'}: node 1 {field}"
    assert "depends on node 9, which is not in this file" in error.problem


def test_dependency_cycle(tmp_path):
    ranks = _pair()
    ranks[1] += [
        ChakraNode(2, "a", COMP, data_deps=(1, 4)),
        ChakraNode(3, "b", COMP, data_deps=(2,)),
        ChakraNode(4, "c", COMP, ctrl_deps=(3,)),
    ]
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / 't.1.et'}: node 2 data_deps"
    assert "dependency cycle: node 2 -> node 4 -> node 3 -> node 2" in error.problem
    ranks[1][2:] = [ChakraNode(2, "self", COMP, ctrl_deps=(2,))]
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / 't.1.et'}: node 2 ctrl_deps" and "node 2 -> node 2" in error.problem


@pytest.mark.parametrize("value, problem", [(99, "unknown node type 99"), (0, "node type 0 (INVALID_NODE: not set)")])
def test_unknown_node_type(tmp_path, value, problem):
    ranks = _pair()
    ranks[0][1] = replace(ranks[0][1], type=value)
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / 't.0.et'}: node 1 type" and error.problem == problem
    assert "4 COMP_NODE" in error.fix


def test_collective_without_or_with_an_unknown_comm_type(tmp_path):
    coll = ChakraNode(7, "coll", COLL, comm_size=MB)
    error = _bad(tmp_path, [[coll]])
    assert error.where == f"{tmp_path / 't.0.et'}: node 7 comm_type" and "without comm_type" in error.problem
    error = _bad(tmp_path, [[replace(coll, comm_type=42)]], int_kind="uint64")
    assert error.where == f"{tmp_path / 't.0.et'}: node 7 comm_type" and "unknown collective type 42" in error.problem
    assert "7 REDUCE_SCATTER" in error.fix


@pytest.mark.parametrize("rank, size", [(0, 0), (1, -5)])
def test_comm_size_zero_or_negative_on_sends_and_receives(tmp_path, rank, size):
    ranks = _pair()
    ranks[rank][0] = replace(ranks[rank][0], comm_size=size)
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / f't.{rank}.et'}: node 0 comm_size" and error.problem == f"comm_size is {size}"


def test_comm_size_missing_or_zero_on_a_collective(tmp_path):
    coll = ChakraNode(3, "coll", COLL, comm_type=CollectiveType.ALL_GATHER)
    error = _bad(tmp_path, [[coll]])
    assert error.where == f"{tmp_path / 't.0.et'}: node 3 comm_size" and "without comm_size" in error.problem
    error = _bad(tmp_path, [[replace(coll, comm_size=0)]])
    assert error.where == f"{tmp_path / 't.0.et'}: node 3 comm_size" and error.problem == "comm_size is 0"


@pytest.mark.parametrize(
    "rank, change, field, problem",
    [
        (0, {"comm_dst": None}, "comm_dst", "a COMM_SEND_NODE without comm_dst"),
        (1, {"comm_src": None}, "comm_src", "a COMM_RECV_NODE without comm_src"),
        (0, {"comm_dst": 2}, "comm_dst", "comm_dst is rank 2, but the trace has ranks 0 to 1"),
        (1, {"comm_src": -1}, "comm_src", "comm_src is rank -1, but the trace has ranks 0 to 1"),
        (0, {"comm_src": 1}, "comm_src", "comm_src is 1 on a COMM_SEND_NODE of rank 0"),
        (1, {"comm_dst": 0}, "comm_dst", "comm_dst is 0 on a COMM_RECV_NODE of rank 1"),
        (1, {"comm_tag": None}, "comm_tag", "a COMM_RECV_NODE without comm_tag"),
        (1, {"comm_size": None}, "comm_size", "a COMM_RECV_NODE without comm_size"),
    ],
)
def test_send_and_receive_peers(tmp_path, rank, change, field, problem):
    ranks = _pair()
    ranks[rank][0] = replace(ranks[rank][0], **change)
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / f't.{rank}.et'}: node 0 {field}" and error.problem == problem


@pytest.mark.parametrize("change", [{"comm_tag": 4}, {"comm_size": 101}])
def test_send_without_its_receive(tmp_path, change):
    ranks = _pair()
    ranks[1][0] = replace(ranks[1][0], **change)
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / 't.0.et'}: node 0 comm_dst"
    assert error.problem == "this send of 100 bytes from rank 0 to rank 1 with tag 3 has no matching receive"


def test_sends_and_receives_pair_as_multisets(tmp_path):
    ranks = _pair()
    ranks[0].append(replace(ranks[0][0], id=2, name="again"))  # a second identical send, one receive
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / 't.0.et'}: node 2 comm_dst" and "no matching receive" in error.problem
    ranks = _pair()
    ranks[1].append(replace(ranks[1][0], id=2, comm_tag=8))  # a receive nothing sends
    error = _bad(tmp_path, ranks)
    assert error.where == f"{tmp_path / 't.1.et'}: node 2 comm_src"
    assert error.problem == "this receive of 100 bytes from rank 0 to rank 1 with tag 8 has no matching send"


def test_attribute_of_the_wrong_kind_or_given_twice(tmp_path):
    write_chakra(tmp_path / "t", _pair())
    path = tmp_path / "t.0.et"
    messages = _split(path)
    _join(path, messages[:1] + [messages[1] + _attr("comm_size", 9, _varint(100))] + messages[2:])
    error = _error(tmp_path / "t")
    assert error.where == f"{path}: node 0 comm_size" and error.problem == "the attribute comm_size is given twice"
    _join(path, messages[:2] + [messages[2] + _attr("comm_tag", 29, b"\x01x")])  # on the COMP node, as a string
    error = _error(tmp_path / "t")
    assert error.where == f"{path}: node 1 comm_tag" and error.problem == "comm_tag is given as string_val"
    assert "int64_val or uint64_val or int32_val or uint32_val" in error.fix
    _join(path, messages[:2] + [messages[2] + _attr("pg_name", 9, _varint(3))])
    error = _error(tmp_path / "t")
    assert error.where == f"{path}: node 1 pg_name" and error.problem == "pg_name is given as int64_val"
    _join(path, messages[:2] + [messages[2] + _attr("involved_dim", 17, _varint(3))])  # sint64_val: not read
    error = _error(tmp_path / "t")
    assert error.problem == "involved_dim has no value of a kind this reader knows" and "bool_list" in error.fix
