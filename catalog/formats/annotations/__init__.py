"""Images with annotations of a dataset's own layout: COCO (`coco_json`), PASCAL VOC
(`voc_xml`), KITTI (`kitti`), CUB (`cub`), CLEVR (`clevr`), CelebA's attribute tables
(`image_tables`), Stanford Cars' .mat struct (`mat_records`).
"""
