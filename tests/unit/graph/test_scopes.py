"""ONNX node names back to modules: a zoo export's nodes to its modules, a user file's scopes to layer labels."""

from edgebench.backends import model_file as mf
from edgebench.graph.scopes import module_of_node, scope_tree
from tests.paths import FIXTURES


def test_node_names_map_back_to_modules():
    modules = {"stages", "stages.0", "stages.0.0", "stages.0.0.conv1", "stages.0.0.relu", "stages.0.0.downsample",
               "stages.0.0.downsample.0", "fc"}  # fmt: skip
    assert module_of_node("/stages/stages.0/stages.0.0/conv1/Conv", modules) == "stages.0.0.conv1"
    assert module_of_node("/stages/stages.0/stages.0.0/relu_1/Relu", modules) == "stages.0.0.relu"
    assert module_of_node("/stages/stages.0/stages.0.0/downsample/downsample.0/Conv", modules) == (
        "stages.0.0.downsample.0"
    )
    assert module_of_node("/fc/Gemm", modules) == "fc"
    assert module_of_node("/Flatten", modules) is None


def test_a_files_scopes_are_its_layer_labels():
    info = mf.inspect(FIXTURES / "models" / "two_inputs.onnx")
    tree = scope_tree([n.name for n in info.nodes], "two_inputs")
    assert tree["names"] == ["two_inputs", "mix", "fc", "act"] and tree["parents"] == [-1, 0, 0, 0]
