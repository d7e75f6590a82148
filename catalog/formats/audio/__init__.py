"""Audio: WAV (and FLAC) files labelled by path, listing files, windows of long recordings
(`wav_folder`).

Helper of the family: `sound_files` (soundfile, the optional decoder of FLAC).
"""
