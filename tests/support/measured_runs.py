"""The measured runs of ../shared/reference/measured-runs.csv whose configuration is complete, copied so the suite
keeps its cases without ../shared (the memory and throughput validation tests check the copy against the file).

Each row's step time (s), MFU by 6·N·tokens and cluster are kept apart in `MEASURED_STEP`: Korthikanti et al. 2022
Table 5, Narayanan et al. 2021 §5.2 (derived from its TFLOP/s), BLOOM's tr11 chronicles.
"""

COLUMNS = ("row_id", "model", "arch", "total_params_b", "active_params_b", "n_layers", "d_model", "n_heads",
           "n_kv_heads", "ffn_hidden_size", "ffn_type", "vocab_size", "seq_len", "gpu_type", "num_gpus", "tp", "pp",
           "vpp", "zero_fsdp", "micro_batch", "global_batch_tokens", "recompute", "flash_attention")
# The measured runs whose configuration is complete, copied from measured-runs.csv (compiled 2026-12-02; sources in
# its measured-runs.md: Korthikanti et al. 2022 Table 3/5, Narayanan et al. 2021 Table 2, BLOOM tr11 README), so the
# suite keeps its cases without ../shared.
MEASURED_RUNS = [dict(zip(COLUMNS, row, strict=True)) for row in (
    ('K-1', 'GPT 22B', 'dense', '22.07', '22.07', '48', '6144', '64', '64', '24576', 'GeLU (4h)', '51200', '2048',
     'A100-80GB', '8', '8', '1', '', 'none', '4', '8192', 'selective', 'no (2022 Megatron fused softmax)'),
    ('K-2', 'GPT 22B', 'dense', '22.07', '22.07', '48', '6144', '64', '64', '24576', 'GeLU (4h)', '51200', '2048',
     'A100-80GB', '8', '8', '1', '', 'none', '4', '8192', 'full', 'no (2022 Megatron fused softmax)'),
    ('K-3', 'GPT-3 175B', 'dense', '174.6', '174.6', '96', '12288', '96', '96', '49152', 'GeLU (4h)', '51200',
     '2048', 'A100-80GB', '64', '8', '8', '3', 'none', '1', '131072', 'selective',
     'no (2022 Megatron fused softmax)'),
    ('K-4', 'GPT-3 175B', 'dense', '174.6', '174.6', '96', '12288', '96', '96', '49152', 'GeLU (4h)', '51200',
     '2048', 'A100-80GB', '64', '8', '8', '3', 'none', '1', '131072', 'full', 'no (2022 Megatron fused softmax)'),
    ('K-5', 'MT-NLG 530B', 'dense', '529.6', '529.6', '105', '20480', '128', '128', '81920', 'GeLU (4h)', '51200',
     '2048', 'A100-80GB', '280', '8', '35', '3', 'none', '1', '573440', 'selective',
     'no (2022 Megatron fused softmax)'),
    ('K-6', 'MT-NLG 530B', 'dense', '529.6', '529.6', '105', '20480', '128', '128', '81920', 'GeLU (4h)', '51200',
     '2048', 'A100-80GB', '280', '8', '35', '3', 'none', '1', '573440', 'full', 'no (2022 Megatron fused softmax)'),
    ('K-7', 'GPT 1T', 'dense', '1008', '1008', '128', '25600', '160', '160', '102400', 'GeLU (4h)', '51200', '2048',
     'A100-80GB', '512', '8', '64', '', 'none', '1', '1048576', 'selective', 'no (2022 Megatron fused softmax)'),
    ('K-8', 'GPT 1T', 'dense', '1008', '1008', '128', '25600', '160', '160', '102400', 'GeLU (4h)', '51200', '2048',
     'A100-80GB', '512', '8', '64', '', 'none', '1', '1048576', 'full', 'no (2022 Megatron fused softmax)'),
    ('K-9', 'MT-NLG 530B', 'dense', '529.6', '529.6', '105', '20480', '128', '128', '81920', 'GeLU (4h)', '51200',
     '2048', 'A100-80GB', '2240', '8', '35', '3',
     'none (plain DP gradient all-reduce, not overlapped with backward)', '1', '4587520', 'selective',
     'no (2022 Megatron fused softmax)'),
    ('N2-1', 'GPT-3 175B (174.6B)', 'dense', '174.6', '174.6', '96', '12288', '96', '96', '49152', 'GeLU (4h)',
     '51200', '2048', 'A100-80GB', '384', '1', '1', '', 'ZeRO-3 (DeepSpeed)', '4', '3145728',
     'full (assumed; eq.(3) counts recompute)', 'no'),
    ('N2-2', 'GPT-3 175B (174.6B)', 'dense', '174.6', '174.6', '96', '12288', '96', '96', '49152', 'GeLU (4h)',
     '51200', '2048', 'A100-80GB', '1536', '1', '1', '', 'ZeRO-3 (DeepSpeed)', '1', '3145728',
     'full (assumed; eq.(3) counts recompute)', 'no'),
    ('N2-3', 'GPT-3 175B (174.6B)', 'dense', '174.6', '174.6', '96', '12288', '96', '96', '49152', 'GeLU (4h)',
     '51200', '2048', 'A100-80GB', '384', '8', '12', 'yes (interleaved; chunks not stated)', 'none', '1', '3145728',
     'full (assumed; eq.(3) counts recompute)', 'no'),
    ('N2-4', 'GPT-3 175B (174.6B)', 'dense', '174.6', '174.6', '96', '12288', '96', '96', '49152', 'GeLU (4h)',
     '51200', '2048', 'A100-80GB', '1536', '8', '12', 'yes (interleaved; chunks not stated)', 'none', '1', '3145728',
     'full (assumed; eq.(3) counts recompute)', 'no'),
    ('BL-1', 'BLOOM 176B', 'dense', '176.2', '176.2', '70', '14336', '112', '112', '57344', 'GeLU (4h)', '250880',
     '2048', 'A100-80GB', '384', '4', '12', '', 'ZeRO-1 (implemented inside DeepSpeed BF16_Optimizer)', '2',
     '4194304', 'full (DeepSpeed activation checkpointing)', 'no (Megatron fused softmax; ALiBi)'),
)]

# row_id: (measured step time in s, measured MFU by 6·N·tokens, cluster named in the interconnect column)
MEASURED_STEP = {
    "K-1": (1.1, 0.3952, "Selene"), "K-2": (1.42, 0.3061, "Selene"), "K-3": (13.75, 0.5002, "Selene"),
    "K-4": (18.13, 0.3793, "Selene"), "K-5": (37.83, 0.5514, "Selene"), "K-6": (49.05, 0.4252, "Selene"),
    "K-7": (71.49, 0.5553, "Selene"), "K-8": (94.42, 0.4205, "Selene"), "K-9": (39.15, 0.5328, "Selene"),
    "N2-1": (81.58, 0.3372, "Selene"), "N2-2": (66.75, 0.1030, "Selene"), "N2-3": (76.78, 0.3583, "Selene"),
    "N2-4": (20.83, 0.3302, "Selene"), "BL-1": (104.7, 0.3536, "Jean Zay"),
}
