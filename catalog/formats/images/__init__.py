"""Images: image files labelled by folder (`image_folder`) or by a CSV table (`image_csv`);
images in a tar or a tar of tars (`image_tar`); raw uint8 images back to back (`raw_images`).

Helpers of the family: `image_files` (an image file kept as stored or decoded to pixels),
`btgraham` (Ben Graham's retina preprocessing).
"""
