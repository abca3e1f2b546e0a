"""The MNN-based on-device training suite's files: its result folders (export and import) and its monitor's
frequency/temperature CSV, with the suite's own meanings."""
